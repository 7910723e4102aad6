import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamStore

/// The libpq connection against the test cluster: how it fails, how errors map, what goes
/// over the wire in binary, and that its socket is close-on-exec.
@Suite struct PostgresConnectionTests {
    private static func status(_ body: () throws -> Void) -> OSStatus? {
        do { try body() } catch let e as KeychainError { return e.status } catch { return nil }
        return 0
    }

    @Test func aClosedPortIsNotAvailableAtOnce() throws {
        // A socket bound to a port but not listening: the kernel refuses connections to it,
        // at once (not after the connect timeout), and no other process can take the port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let start = Date()
        var caught: KeychainError?
        do { _ = try PostgresConnection(dsn: "postgresql://kc:s3cretpw@127.0.0.1:\(port)/x", connectTimeout: 5) } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecNotAvailable)
        #expect(caught?.message.hasPrefix("cannot reach the PostgreSQL server 127.0.0.1:") == true, "\(String(describing: caught))")
        #expect(caught?.message.contains("s3cretpw") == false, "the password is never in a message")
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func aWrongPasswordIsNotInTheMessage() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let db = TestPostgres.databaseName(of: dsn)
        // A role with a password over a Unix socket of a database that requires it is more
        // set-up than needed: a nonexistent database names the failure the same way.
        let port = try TestPostgres.shared.port()
        var caught: KeychainError?
        do { _ = try PostgresConnection(dsn: "postgresql://nobody_here:hunter2-pw@127.0.0.1:\(port)/\(db)") } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecNotAvailable)
        #expect(caught?.message.contains("nobody_here") == true, "libpq's reason is kept: \(String(describing: caught))")
        #expect(caught?.message.contains("hunter2-pw") == false)
    }

    @Test func valuesGoBothWaysInBinary() throws {
        let c = try PostgresConnection(dsn: try TestPostgres.shared.newDatabase())
        let bytes: [UInt8] = [0, 1, 2, 0xFF, 0, 0x80] + (0..<300).map { UInt8($0 % 256) }
        let r = try c.execute(
            "SELECT $1::bytea, $2::text, $3::bigint, $4::bytea, $5::int, $6::smallint, ''::bytea, $7::bigint",
            [.bytes(bytes), .text("grüße ✓"), .int64(Int64.min + 1), nil, .int64(-7), .int64(-2), .int64(Int64.max)])
        #expect(r.rowCount == 1)
        #expect(r.bytes(0, 0) == bytes)
        #expect(r.text(0, 1) == "grüße ✓")
        #expect(r.int64(0, 2) == Int64.min + 1)
        #expect(r.bytes(0, 3) == nil && r.isNull(0, 3))
        #expect(r.int64(0, 4) == -7)
        #expect(r.int64(0, 5) == -2)
        #expect(r.bytes(0, 6) == [])
        #expect(r.int64(0, 7) == Int64.max)
        // Out of range and type mismatches are nil, never a crash.
        #expect(r.bytes(1, 0) == nil && r.int64(0, 0) == nil && r.text(0, 99) == nil)
        // A type kc never reads is a malformed answer.
        #expect(Self.status { _ = try c.execute("SELECT now()") } == errSecIO)
        // Prepared: the same answers, and a second call reuses the statement.
        for n in [Int64(5), 6] {
            let p = try c.executePrepared("SELECT $1::bigint + 1, $2::bytea", [.int64(n), .bytes([UInt8(n)])])
            #expect(p.int64(0, 0) == n + 1 && p.bytes(0, 1) == [UInt8(n)])
        }
        #expect(c.preparing, "a direct connection keeps its prepared statements")
        try c.execute("CREATE TABLE t (a bigint)")
        #expect(try c.execute("INSERT INTO t VALUES (1), (2), (3)").affectedRows == 3)
        #expect(try c.execute("DELETE FROM t WHERE a > $1", [.int64(1)]).affectedRows == 2)
    }

    @Test func errorsMapBySQLState() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let db = TestPostgres.databaseName(of: dsn)
        let c = try PostgresConnection(dsn: dsn)
        try c.execute("CREATE TABLE u (k bytea PRIMARY KEY)")
        try c.execute("INSERT INTO u VALUES ($1)", [.bytes(Array("findme-value".utf8))])
        var caught: KeychainError?
        do { try c.execute("INSERT INTO u VALUES ($1)", [.bytes(Array("findme-value".utf8))]) } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecDuplicateItem)
        #expect(c.lastSQLState == "23505")
        #expect(caught.map { !$0.description.contains("findme") } == true, "no parameter value in a message")

        // A real unprivileged role: reading is allowed, writing is refused.
        let role = "reader_\(db)"
        try TestPostgres.shared.psql("CREATE ROLE \(role) LOGIN; GRANT SELECT ON u TO \(role)", database: db)
        let reader = try PostgresConnection(dsn: try TestPostgres.shared.dsn(database: db, role: role))
        #expect(try reader.execute("SELECT count(*)::bigint FROM u").int64(0, 0) == 1)
        #expect(Self.status { try reader.execute("INSERT INTO u VALUES ($1)", [.bytes([9])]) } == errSecReadOnly)
        #expect(reader.lastSQLState == "42501")
        // A read-only transaction refuses a write the same way (25006).
        try c.begin(readOnlySnapshot: true)
        #expect(Self.status { try c.execute("INSERT INTO u VALUES ($1)", [.bytes([8])]) } == errSecReadOnly)
        #expect(c.lastSQLState == "25006")
        c.rollback()
        // Anything else: errSecIO with the server's message.
        caught = nil
        do { try c.execute("SELECT * FROM no_such_table") } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecIO)
        #expect(caught?.message.contains("no_such_table") == true)
        #expect(c.lastSQLState == "42P01")
        // The connection still works after each refusal.
        #expect(try c.execute("SELECT 1::bigint").int64(0, 0) == 1)
        #expect(c.lastSQLState == nil)
    }

    @Test func aKilledSessionIsALostConnectionAndReconnects() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let c = try PostgresConnection(dsn: dsn)
        _ = try c.executePrepared("SELECT $1::bigint", [.int64(1)])
        let pid = try #require(c.execute("SELECT pg_backend_pid()::bigint").int64(0, 0))
        try TestPostgres.shared.psql("SELECT pg_terminate_backend(\(pid))", database: dsn)
        #expect(Self.status { try c.execute("SELECT 1::bigint") } == errSecNotAvailable)
        #expect(PostgresFailure.isConnectionLoss(c.lastSQLState))
        #expect(c.isBroken)
        c.rollback()   // never throws on a dead connection
        try c.reconnect()
        #expect(!c.isBroken)
        // The prepared statement is prepared again on the new session.
        #expect(try c.executePrepared("SELECT $1::bigint", [.int64(41)]).int64(0, 0) == 41)
        let flags = fcntl(c.socket, F_GETFD)
        #expect(flags >= 0 && flags & FD_CLOEXEC != 0, "the socket after a reconnect is close-on-exec")
    }

    @Test func theSocketIsCloseOnExec() throws {
        let c = try PostgresConnection(dsn: try TestPostgres.shared.newDatabase())
        #expect(c.socket > 2)
        let flags = fcntl(c.socket, F_GETFD)
        #expect(flags >= 0 && flags & FD_CLOEXEC != 0)
    }

    @Test func transactionsAreSnapshotsForReadsAndCommittedForWrites() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let a = try PostgresConnection(dsn: dsn), b = try PostgresConnection(dsn: dsn)
        try a.execute("CREATE TABLE v (x bigint)")
        try b.begin(readOnlySnapshot: true)
        #expect(try b.execute("SELECT count(*)::bigint FROM v").int64(0, 0) == 0)
        try a.execute("INSERT INTO v VALUES (1)")
        // The snapshot does not see a commit made after it began.
        #expect(try b.execute("SELECT count(*)::bigint FROM v").int64(0, 0) == 0)
        try b.commit()
        #expect(try b.execute("SELECT count(*)::bigint FROM v").int64(0, 0) == 1)
        // A write transaction rolled back leaves nothing.
        try a.begin(readOnlySnapshot: false)
        try a.execute("INSERT INTO v VALUES (2)")
        a.rollback()
        #expect(try b.execute("SELECT count(*)::bigint FROM v").int64(0, 0) == 1)
        #expect(try b.execute("SHOW transaction_isolation").rowCount == 1)
    }

    @Test(arguments: [
        ("postgresql://kc@127.0.0.1/db", false, true),
        ("postgresql://kc@localhost:5433/db", false, true),
        ("postgresql://kc@[::1]/db", false, true),
        ("host=/var/run/postgresql dbname=kc", false, true),
        ("postgresql:///kc", false, true),
        ("postgresql://kc@db.example.com/kc", false, false),
        ("postgresql://kc@db.example.com/kc?sslmode=require", false, false),
        ("host=10.0.0.5 dbname=kc sslmode=prefer", false, false),
        ("postgresql://kc@db.example.com/kc?sslmode=verify-full", false, true),
        ("postgresql://kc@db.example.com/kc?sslmode=verify-ca", false, true),
        ("postgresql://kc@db.example.com/kc", true, true),
        ("host=127.0.0.1,db.example.com dbname=kc", false, false),
        ("host=localhost hostaddr=192.0.2.1 dbname=kc", false, false)
    ])
    func transportNeedsVerifiedTLSOffThisMachine(_ dsn: String, _ insecure: Bool, _ allowed: Bool) {
        var caught: KeychainError?
        do { try PostgresConnection.checkTransport(dsn: dsn, insecureAllowed: insecure) } catch let e as KeychainError { caught = e } catch {}
        if allowed {
            #expect(caught == nil, "\(dsn)")
        } else {
            #expect(caught?.status == errSecParam, "\(dsn)")
            #expect(caught?.hint?.contains("--insecure-transport") == true && caught?.hint?.contains("sslmode=verify-full") == true)
        }
    }

    @Test func aMalformedDSNIsAParameterError() {
        #expect(Self.status { try PostgresConnection.checkTransport(dsn: "host=a nonsense_option=1", insecureAllowed: false) } == errSecParam)
        #expect(Self.status { _ = try PostgresConnection(dsn: "postgresql://a@b:notaport:x/y") } != 0)
    }
}

/// A server restart (on a cluster of its own: the shared one serves parallel tests).
@Suite struct PostgresRestartTests {
    @Test func aRestartedServerIsLostThenReachedAgain() throws {
        let cluster = TestPostgres.dedicated()
        let dsn = try cluster.newDatabase()
        let c = try PostgresConnection(dsn: dsn)
        try c.execute("CREATE TABLE r (x bigint)")
        try c.execute("INSERT INTO r VALUES (1)")
        try cluster.restart()
        var status: OSStatus?
        do { try c.execute("SELECT count(*)::bigint FROM r") } catch let e as KeychainError { status = e.status }
        #expect(status == errSecNotAvailable)
        #expect(c.isBroken)
        try c.reconnect()
        #expect(try c.execute("SELECT count(*)::bigint FROM r").int64(0, 0) == 1, "a committed row survives the restart")
        #expect(try cluster.port() != TestPostgres.shared.port())
    }

    @Test func aStoreReconnectsAtTheStartOfATransaction() throws {
        let cluster = TestPostgres.dedicated()
        let store = try PostgresItemStoreTests.makeStore(dsn: try cluster.newDatabase(), keychainID: [UInt8](repeating: 0x44, count: 32))
        let row = ItemRow(itemID: [1], classCode: "genp", rowVersion: 1, primaryKey: [2], indexes: [:], wrappedKey: [3], metadata: [4], data: [5])
        _ = try store.transaction(write: true) { try store.insert(row) }
        try cluster.restart()
        // The connection is dead but libpq does not know yet: the BEGIN finds out, and the
        // store connects again and goes on.
        var seen = 0
        try store.transaction(write: false) {
            try store.forEachRow(.all, includeData: true) { _ in
                seen += 1; return true
            }
        }
        #expect(seen == 1)
        #expect(!store.connection.isBroken)
    }
}
