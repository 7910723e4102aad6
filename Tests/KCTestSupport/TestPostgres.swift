import Foundation
import KeychainCore
import Synchronization

/// One throwaway PostgreSQL cluster per test process (`docs/team.md`, "Tests"): started on
/// first use, stopped at process exit. `initdb` as the `postgres` user when the tests run
/// as root (initdb refuses root), `fsync=off`, listening on 127.0.0.1 on a free port with
/// its Unix socket in its own data folder, trust authentication on 127.0.0.1 so any local
/// user and any role of the cluster connects without a password.
///
///     let dsn = try TestPostgres.shared.newDatabase()   // postgresql://postgres@127.0.0.1:PORT/kc_test_3
///
/// When the cluster cannot start, every test that asks for it fails with the output of
/// initdb or pg_ctl: never a skip.
public final class TestPostgres: Sendable {
    /// The cluster of this test process.
    public static let shared = TestPostgres()

    /// The running cluster, or why it could not start.
    private struct Cluster: Sendable {
        let bin: String
        let folder: String
        let data: String
        let port: Int
        let runAs: [String]
    }

    private let state = Mutex<Result<Cluster, KeychainError>?>(nil)
    private let counter = Atomic<Int>(0)

    private init() {}

    /// A cluster of its own, for a test that restarts or stops the server (the shared one
    /// serves tests running in parallel); started on first use, stopped at process exit.
    public static func dedicated() -> TestPostgres { TestPostgres() }

    /// Every cluster started in this process, stopped at exit.
    private static let started = Mutex<[Cluster]>([])

    /// The cluster, started on the first call.
    /// - Throws: what initdb or pg_ctl printed when it cannot start (the same error on every call).
    private func cluster() throws -> Cluster {
        let result = state.withLock { s -> Result<Cluster, KeychainError> in
            if let s { return s }
            let started: Result<Cluster, KeychainError>
            do { started = .success(try Self.start()) } catch let e as KeychainError { started = .failure(e) } catch {
                started = .failure(KeychainError(errSecIO, "the test PostgreSQL cluster did not start: \(error)"))
            }
            s = started
            if case .success(let c) = started {
                let first = Self.started.withLock { list in
                    list.append(c)
                    return list.count == 1
                }
                if first { atexit { TestPostgres.stopAllAtExit() } }
            }
            return started
        }
        return try result.get()
    }

    /// The TCP port the cluster listens on (127.0.0.1).
    public func port() throws -> Int { try cluster().port }

    /// The folder of the cluster's binaries (`/usr/lib/postgresql/N/bin`).
    public func binFolder() throws -> String { try cluster().bin }

    /// A new, empty database of its own; answers its DSN (user postgres, a superuser, over
    /// 127.0.0.1 with trust authentication).
    public func newDatabase() throws -> String {
        let c = try cluster()
        let name = "kc_test_\(counter.add(1, ordering: .relaxed).newValue)"
        _ = try psql("CREATE DATABASE \(name)", database: "postgres")
        return "postgresql://postgres@127.0.0.1:\(c.port)/\(name)"
    }

    /// The DSN of `database` as `role` (trust authentication: no password).
    public func dsn(database: String, role: String) throws -> String {
        "postgresql://\(role)@127.0.0.1:\(try cluster().port)/\(database)"
    }

    /// The database name of a DSN made by `newDatabase`.
    public static func databaseName(of dsn: String) -> String {
        String(dsn.split(separator: "/").last ?? "")
    }

    /// Runs `sql` with psql as the superuser in `database` (the name, or a DSN of
    /// `newDatabase`); answers psql's unaligned, tuples-only output.
    /// - Throws: errSecIO with psql's error output when a statement fails.
    @discardableResult
    public func psql(_ sql: String, database: String) throws -> String {
        let c = try cluster()
        let db = database.contains("/") ? Self.databaseName(of: database) : database
        let out = try Spawn.run(
            [
                c.bin + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                "-p", String(c.port), "-U", "postgres", "-d", db, "-c", sql
            ],
            environment: Self.environment, timeout: 60)
        guard out.status == 0 else { throw KeychainError(errSecIO, "psql failed (\(out.status)): \(out.stderr)") }
        return out.stdout
    }

    /// Restarts the server (`pg_ctl restart -m fast`): every connection is cut.
    /// What the server has logged so far (its `server.log`).
    public func serverLog() throws -> String {
        (try? String(contentsOfFile: try cluster().folder + "/server.log", encoding: .utf8)) ?? ""
    }

    /// `pg_dump` of one database, as the postgres superuser (what a backup would hold).
    public func dump(database: String) throws -> String {
        let c = try cluster()
        let db = database.contains("/") ? Self.databaseName(of: database) : database
        let out = try Spawn.run(
            [c.bin + "/pg_dump", "-h", "127.0.0.1", "-p", String(c.port), "-U", "postgres", db],
            environment: Self.environment, timeout: 60)
        guard out.status == 0 else { throw KeychainError(errSecIO, "pg_dump failed (\(out.status)): \(out.stderr)") }
        return out.stdout
    }

    public func restart() throws {
        let c = try cluster()
        let out = try Spawn.run(
            c.runAs + [
                c.bin + "/pg_ctl", "-D", c.data, "-w", "-t", "60", "-m", "fast",
                "-l", c.folder + "/server.log", "-o", Self.serverOptions(c.port, c.data), "restart"
            ],
            environment: Self.environment, timeout: 90)
        guard out.status == 0 else {
            throw KeychainError(errSecIO, "pg_ctl restart failed (\(out.status)): \(out.stdout)\(out.stderr)\(Self.log(c.folder))")
        }
    }

    // MARK: - Starting and stopping

    /// The environment of every child: no PATH search beyond the system's, the C locale.
    private static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "PGCONNECT_TIMEOUT": "10"]

    /// The server's settings: a throwaway cluster (no fsync), on 127.0.0.1 only.
    private static func serverOptions(_ port: Int, _ data: String) -> String {
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories=\(data) -c max_connections=200"
    }

    /// The server's log, to show with a failure.
    private static func log(_ folder: String) -> String {
        (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)).map { "\n--- server.log ---\n" + $0 } ?? ""
    }

    /// The highest installed server's bin folder.
    private static func findBin() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { v in Int(v).map { ($0, v) } }.sorted { $0.0 > $1.0 }
        for (_, v) in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(v)/bin/initdb") {
            return "\(root)/\(v)/bin"
        }
        throw KeychainError(errSecIO, "no PostgreSQL server in \(root): the team tests need one (apt-get install postgresql; make test-deps installs it)")
    }

    /// initdb and pg_ctl start, as postgres when run as root.
    private static func start() throws -> Cluster {
        let bin = try findBin()
        var template = Array("/tmp/kc-pg-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed for the test PostgreSQL cluster")
        }
        let folder = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        let data = folder + "/data"
        // initdb refuses root: run the server's programs as postgres, who owns the folder.
        var runAs: [String] = []
        if getuid() == 0 {
            guard let pw = getpwnam("postgres") else {
                throw KeychainError(errSecIO, "the tests run as root and there is no postgres user to run initdb as")
            }
            guard chown(folder, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else {
                throw KeychainError(errSecIO, "cannot give \(folder) to the postgres user: errno \(errno)")
            }
            runAs = ["/usr/sbin/runuser", "-u", "postgres", "--"]
        }
        let initdb = try Spawn.run(
            runAs + [
                bin + "/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                "--locale=C", "--no-sync", "--no-instructions"
            ],
            environment: environment, timeout: 120)
        guard initdb.status == 0 else {
            throw KeychainError(errSecIO, "initdb failed (\(initdb.status)):\n\(initdb.stdout)\n\(initdb.stderr)")
        }
        // A free port: the kernel's choice for a socket bound to port 0, released just before
        // the server binds it; another process may take it meanwhile, so a few tries.
        var failures: [String] = []
        for _ in 0..<3 {
            let port = try freePort()
            let out = try Spawn.run(
                runAs + [
                    bin + "/pg_ctl", "-D", data, "-w", "-t", "60", "-l", folder + "/server.log",
                    "-o", serverOptions(port, data), "start"
                ],
                environment: environment, timeout: 90)
            if out.status == 0 { return Cluster(bin: bin, folder: folder, data: data, port: port, runAs: runAs) }
            failures.append("pg_ctl start on port \(port) failed (\(out.status)): \(out.stdout)\(out.stderr)\(log(folder))")
        }
        throw KeychainError(errSecIO, failures.joined(separator: "\n"))
    }

    /// A port of 127.0.0.1 nobody listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "socket failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw KeychainError(errSecIO, "cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops every cluster and removes its folder (at process exit).
    private static func stopAllAtExit() {
        for c in started.withLock({ $0 }) {
            _ = try? Spawn.run(
                c.runAs + [c.bin + "/pg_ctl", "-D", c.data, "-w", "-t", "30", "-m", "immediate", "stop"],
                environment: environment, timeout: 40)
            try? FileManager.default.removeItem(atPath: c.folder)
        }
    }
}
