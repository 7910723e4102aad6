import Foundation
import KeychainCore
import Synchronization

/// A PgBouncer in transaction pooling mode in front of a test PostgreSQL cluster
/// (`docs/team.md`, "PgBouncer"): Debian's `pgbouncer`, on 127.0.0.1 on a free port, trust
/// authentication, a pool of `poolSize` server connections per database and user, so that
/// clients share server connections between transactions as they do behind a real one.
/// Started as the `postgres` user when the tests run as root (PgBouncer refuses root),
/// daemonized with a pid file, stopped at process exit.
///
///     let dsn = try TestPgBouncer.start(poolSize: 2).dsn(for: try TestPostgres.shared.newDatabase())
///
/// When PgBouncer is missing or cannot start, the test fails with what it printed: never a skip.
public final class TestPgBouncer: Sendable {
    /// The port PgBouncer listens on (127.0.0.1).
    public let port: Int
    private let folder: String

    /// Every PgBouncer started in this process, stopped at exit.
    private static let started = Mutex<[TestPgBouncer]>([])

    private init(port: Int, folder: String) {
        self.port = port
        self.folder = folder
    }

    /// `dsn` (a database of `cluster`) through this PgBouncer: the same user and database,
    /// PgBouncer's port.
    public func dsn(for dsn: String) -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(TestPostgres.databaseName(of: dsn))"
    }

    /// Starts a PgBouncer in front of `cluster` with `poolSize` server connections per pool.
    public static func start(poolSize: Int, cluster: TestPostgres = .shared) throws -> TestPgBouncer {
        let binary = "/usr/sbin/pgbouncer"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw KeychainError(errSecIO, "no \(binary): the PgBouncer tests need it (apt-get install pgbouncer; make test-deps installs it)")
        }
        let serverPort = try cluster.port()
        // Under /tmp, whatever TMPDIR says: as root, PgBouncer runs as postgres, who must reach it.
        let folder = OtherUser.base + "/kc-pgbouncer-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var runAs: [String] = []
        if getuid() == 0 {
            guard let pw = getpwnam("postgres"), chown(folder, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else {
                throw KeychainError(errSecIO, "cannot give \(folder) to the postgres user to run PgBouncer as")
            }
            runAs = ["/usr/sbin/runuser", "-u", "postgres", "--"]
        }
        var failures: [String] = []
        for _ in 0..<3 {
            let port = try TestPostgres.freePort()
            let config = """
                [databases]
                * = host=127.0.0.1 port=\(serverPort)
                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(port)
                unix_socket_dir =
                auth_type = trust
                auth_file = \(folder)/users.txt
                pool_mode = transaction
                default_pool_size = \(poolSize)
                max_client_conn = 200
                logfile = \(folder)/pgbouncer.log
                pidfile = \(folder)/pgbouncer.pid
                """
            try config.write(toFile: folder + "/pgbouncer.ini", atomically: false, encoding: .utf8)
            try "\"postgres\" \"\"\n".write(toFile: folder + "/users.txt", atomically: false, encoding: .utf8)
            if let pw = getpwnam("postgres"), getuid() == 0 {
                for f in ["/pgbouncer.ini", "/users.txt"] { _ = chown(folder + f, pw.pointee.pw_uid, pw.pointee.pw_gid) }
            }
            let out = try Spawn.run(runAs + [binary, "-d", folder + "/pgbouncer.ini"], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            if out.status == 0, LoopbackTCP.waitForListener(port, seconds: 10) {
                let bouncer = TestPgBouncer(port: port, folder: folder)
                let first = started.withLock { list in
                    list.append(bouncer)
                    return list.count == 1
                }
                if first { atexit { TestPgBouncer.stopAllAtExit() } }
                return bouncer
            }
            let log = (try? String(contentsOfFile: folder + "/pgbouncer.log", encoding: .utf8)) ?? ""
            failures.append("pgbouncer on port \(port) did not start (\(out.status)): \(out.stdout)\(out.stderr)\(log)")
        }
        throw KeychainError(errSecIO, failures.joined(separator: "\n"))
    }

    /// Stops every PgBouncer (SIGTERM to the pid in its pid file) and removes its folder.
    private static func stopAllAtExit() {
        for b in started.withLock({ $0 }) {
            if let text = try? String(contentsOfFile: b.folder + "/pgbouncer.pid", encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1
            {
                kill(pid, SIGTERM)
            }
            try? FileManager.default.removeItem(atPath: b.folder)
        }
    }
}
