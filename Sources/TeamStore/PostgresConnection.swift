import CPostgres
import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a PostgreSQL server through libpq (`docs/design.md`, "The PostgreSQL
/// client"): binary parameters and results, prepared statements for the hot lookups,
/// errors mapped by SQLSTATE (`PostgresFailure`).
///
/// Every round trip has a deadline (`roundTripTimeout`, `KC_TEAM_ROUND_TRIP_TIMEOUT`): libpq
/// runs non-blocking and kc polls its socket, so a server that holds a lock kc waits for,
/// or a peer that accepts and never answers, costs at most that long. At the deadline the
/// statement is cancelled (a cancel request, itself bounded), the connection is closed and
/// errSecNotAvailable (exit 53) says which server did not answer. The connection also
/// carries TCP keepalives and `tcp_user_timeout`, and the verified-TLS rail is checked on
/// what it really reached (`PostgresConnection+Transport.swift`). `gate` lets another
/// thread shut it for good (`ConnectionGate`): a locked keychain's waiting statement ends
/// at once, and none follows.
///
///     let c = try PostgresConnection(dsn: "postgresql://kc@db.example/kc?sslmode=verify-full")
///     let r = try c.execute("SELECT generation FROM kc_keychains WHERE keychain_id = $1", [.bytes(id)])
///
/// Not thread-safe: one owner at a time (the agent's serving thread); only `gate` is shared.
package final class PostgresConnection {
    /// The connection string it was opened with (may hold a password: never print it).
    package let dsn: String
    /// The connect timeout in seconds, kept for `reconnect()`.
    private let connectTimeout: Int
    /// Whether the team was created or joined with `--insecure-transport` (the rail is off).
    package let insecureTransport: Bool
    /// How long one round trip (a statement sent and its whole answer read) may take, in
    /// seconds (`defaultRoundTripTimeout` unless changed).
    package var roundTripTimeout: Double = PostgresConnection.defaultRoundTripTimeout
    /// What another thread uses to shut this connection for good (a lock of its keychain).
    package let gate = ConnectionGate()
    /// libpq's connection; nil before the first connect succeeded, after a deadline passed
    /// (closed), and after `deinit` began.
    private var handle: OpaquePointer?
    /// The statements prepared on this server session (prepared again after a reconnect).
    private var prepared: Set<String> = []
    /// The names `executePrepared` gave to statement texts.
    private var names: [String: String] = [:]
    /// Whether statements are prepared (false for good once a pool showed it loses them).
    package private(set) var preparing = true
    /// The SQLSTATE of the last failed statement (nil after a success, "08006" for a lost
    /// connection without an answer): lets callers tell a lost connection from a refusal.
    package private(set) var lastSQLState: String?
    /// How many statements this connection sent to the server (for tests of how many
    /// round trips an operation costs).
    package private(set) var statementsSent = 0
    /// Whether a transaction that `begin` opened is still open.
    package private(set) var inTransaction = false
    /// Whether the last round trip ended at its deadline (the connection was closed): the
    /// server is stalled, so callers do not retry what failed (a retry would wait as long
    /// again); cleared by the next successful round trip or connect.
    package private(set) var timedOut = false
    /// What messages call the server: host, port and database, never user or password.
    package let serverName: String

    /// The round-trip deadline when `KC_TEAM_ROUND_TRIP_TIMEOUT` does not set one: 30 s.
    /// What is waited for is one statement: the longest kc sends (a re-key's batch, a
    /// piece of a first open's scan) takes well under a second on loopback; a write
    /// waits for another member's re-key to commit (its `FOR UPDATE` on the keychain
    /// row: about 8 s of statements at 100,000 items) and for a busy server. 30 s covers
    /// that several times over and still ends a stall.
    package static let standardRoundTripTimeout = 30.0

    /// `KC_TEAM_ROUND_TRIP_TIMEOUT` in seconds (0.1 – 3600, decimals allowed), else 30.
    package static let defaultRoundTripTimeout: Double = {
        guard let raw = getenv("KC_TEAM_ROUND_TRIP_TIMEOUT").map({ String(cString: $0) }),
            let seconds = Double(raw), seconds.isFinite
        else { return standardRoundTripTimeout }
        return min(max(seconds, 0.1), 3_600)
    }()

    /// Connects to `dsn` (a libpq URI or key=value string) within `connectTimeout` seconds,
    /// checking the verified-TLS rail unless `insecureTransport`.
    /// - Throws: errSecNotAvailable ("cannot reach the PostgreSQL server …") with libpq's
    ///   message, from which the password is removed; errSecParam for a malformed DSN or a
    ///   remote server without verified TLS.
    package init(dsn: String, connectTimeout: Int = 10, insecureTransport: Bool = false) throws {
        self.dsn = dsn
        self.connectTimeout = connectTimeout
        self.insecureTransport = insecureTransport
        let options = try Self.parse(dsn)
        serverName = Self.describe(options)
        try open(options)
    }

    /// A second connection to the same server with the same settings (a scan's helper).
    package convenience init(like other: PostgresConnection) throws {
        try self.init(dsn: other.dsn, connectTimeout: other.connectTimeout, insecureTransport: other.insecureTransport)
        roundTripTimeout = other.roundTripTimeout
    }

    deinit {
        close()
    }

    /// Connects (`connect`) and hands the socket to `gate`.
    private func open(_ options: [String: String]) throws {
        let conn = try Self.connect(
            dsn: dsn, timeout: connectTimeout, options: options, name: serverName,
            insecure: insecureTransport, gate: gate)
        guard gate.attach(PQsocket(conn)) else {
            PQfinish(conn)
            throw gate.lockedError(serverName)
        }
        handle = conn
        timedOut = false
    }

    /// Closes libpq's connection, taking its socket from `gate` first (so that `revoke` never
    /// shuts a descriptor number reused by something else).
    private func close() {
        guard let conn = handle else { return }
        handle = nil
        gate.detach { PQfinish(conn) }
    }

    /// The keywords kc sets before the DSN's own (which override them): the connect
    /// timeout, TCP keepalives (a dead peer is found within about a minute even between
    /// statements) and `tcp_user_timeout` (data the peer never acknowledges fails the
    /// connection), the application name and the encoding.
    static func keywords(timeout: Int) -> [(String, String)] {
        [
            ("connect_timeout", String(max(timeout, 1))),
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(Int(standardRoundTripTimeout * 1000))),
            ("fallback_application_name", "kc-team"), ("client_encoding", "UTF8")
        ]
    }

    /// Opens a libpq connection without blocking past `timeout` seconds per host: the rail
    /// on libpq's resolved options before the startup is sent, on the established
    /// connection after; non-blocking and close-on-exec from then on.
    private static func connect(
        dsn: String, timeout: Int, options: [String: String], name: String,
        insecure: Bool, gate: ConnectionGate
    ) throws -> OpaquePointer {
        // Ours first: a value in the DSN itself overrides it (expand_dbname).
        let ours = keywords(timeout: timeout)
        let keys = ours.map(\.0) + ["dbname"], values = ours.map(\.1) + [dsn]
        let conn = withCStrings(keys) { k in withCStrings(values) { v in PQconnectStartParams(k, v, 1) } }
        guard let conn else {
            throw KeychainError(errSecNotAvailable, "cannot reach the PostgreSQL server \(name): out of memory")
        }
        do {
            guard PQstatus(conn) != CONNECTION_BAD else { throw unreachable(conn, options: options, name: name) }
            // What libpq will really do (the DSN, the PG* variables and the service file
            // resolved): only a TCP SYN may have gone out yet.
            if !insecure { try checkResolved(conn) }
            let hosts = max(
                (PQconninfo(conn).map { info in
                    defer { PQconninfoFree(info) }
                    return read(info, skipEmpty: true)["host"]?.split(separator: ",").count ?? 1
                }) ?? 1, 1)
            let deadline = Deadline.after(seconds: Double(max(timeout, 1) * hosts))
            var state = PGRES_POLLING_WRITING
            while state != PGRES_POLLING_OK {
                guard state != PGRES_POLLING_FAILED else { throw unreachable(conn, options: options, name: name) }
                let events = state == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
                let remaining = milliseconds(until: deadline)
                guard remaining > 0 else {
                    throw KeychainError(
                        errSecNotAvailable, "cannot reach the PostgreSQL server \(name): no answer within \(max(timeout, 1) * hosts) s",
                        hint: "check the server, the DSN and the network, then try again")
                }
                guard !gate.isRevoked else { throw gate.lockedError(name) }
                var p = pollfd(fd: PQsocket(conn), events: events, revents: 0)
                let rc = poll(&p, 1, Int32(min(remaining, 250)))
                if rc < 0 && errno != EINTR { throw unreachable(conn, options: options, name: name) }
                if rc > 0 { state = PQconnectPoll(conn) }
            }
            guard PQstatus(conn) == CONNECTION_OK else { throw unreachable(conn, options: options, name: name) }
            if !insecure { try checkEstablished(conn) }
            guard PQsetnonblocking(conn, 1) == 0 else { throw unreachable(conn, options: options, name: name) }
        } catch {
            PQfinish(conn)
            throw error
        }
        setCloseOnExec(conn)
        return conn
    }

    /// The error for a connection that failed, with libpq's message without the password.
    private static func unreachable(_ conn: OpaquePointer, options: [String: String], name: String) -> KeychainError {
        var message = PQerrorMessage(conn).map { String(cString: $0) } ?? "unknown error"
        if let password = options["password"], !password.isEmpty {
            message = message.replacingAll(password, with: "***")
        }
        // `invalid integer value "…" for connection option "port"`, `invalid sslmode value:
        // "…"`: libpq quotes the value, which may be a misplaced part of a password.
        if message.contains(" value") { message = message.withoutQuotedParts }
        return KeychainError(
            errSecNotAvailable, "cannot reach the PostgreSQL server \(name): \(message.trimmedLines)",
            hint: "check the server, the DSN and the network, then try again")
    }

    /// Milliseconds left until `deadline` (0 when it passed).
    static func milliseconds(until deadline: Deadline) -> Int {
        let now = Deadline.now.nanoseconds
        return deadline.nanoseconds > now ? Int((deadline.nanoseconds - now) / 1_000_000) + 1 : 0
    }

    /// Sets FD_CLOEXEC on libpq's socket: no child the agent starts inherits it. libpq makes
    /// the socket itself, without SOCK_CLOEXEC, so it is close-on-exec only from here on; the
    /// moment before cannot leak either, because every child kc's processes start
    /// (`DetachedChild`, and the tests' `Spawn`) closes every descriptor from 3 up
    /// (`CloseOnExec.closeAll`) before it runs anything.
    private static func setCloseOnExec(_ conn: OpaquePointer) {
        let fd = PQsocket(conn)
        guard fd >= 0 else { return }
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// libpq's socket descriptor (-1 when there is none), for tests of its flags.
    package var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    /// Whether the connection is lost (libpq's CONNECTION_BAD, or closed at a deadline):
    /// `reconnect()` before use.
    package var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Connects again (after a server restart or a lost network): a new session, so the
    /// prepared statements are prepared again and no transaction is open.
    /// - Throws: errSecNotAvailable when the server is still unreachable;
    ///   errSecInteractionNotAllowed once `gate` was shut.
    package func reconnect() throws {
        let options = try Self.parse(dsn)
        close()
        prepared = []
        inTransaction = false
        lastSQLState = nil
        try open(options)
    }

    /// Runs `sql` with binary `params` ($1, $2, …; nil is NULL) and answers its rows in binary.
    /// - Throws: the mapped error of `PostgresFailure`; errSecNotAvailable at the deadline.
    @discardableResult
    package func execute(_ sql: String, _ params: [PGValue?] = []) throws -> PGResult {
        let result = try roundTrip(params) { conn, values, lengths, formats in
            let types = params.map { $0?.typeOID ?? 0 }
            return PQsendQueryParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
        defer { PQclear(result) }
        guard let result else { return PGResult(rows: [], affectedRows: 0) }
        return try PGResult(copying: result)
    }

    /// Runs `sql` with binary `params` as `execute` does, and answers its rows in place
    /// (`PGRows`): for statements that read many rows, whose values are not all kept.
    /// - Throws: the mapped error of `PostgresFailure`; errSecNotAvailable at the deadline.
    package func executeRows(_ sql: String, _ params: [PGValue?] = []) throws -> PGRows {
        let result = try roundTrip(params) { conn, values, lengths, formats in
            let types = params.map { $0?.typeOID ?? 0 }
            return PQsendQueryParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
        guard let result else { throw PGResult.malformed("no result") }
        return try PGRows(taking: result)
    }

    /// Sends `sql` with binary `params` without waiting for its answer, which
    /// `receiveRows` then reads: the server works on it while the caller works on the
    /// answer before (a scan that asks for its next piece while it hashes this one).
    /// - Throws: errSecNotAvailable when the connection is lost, cannot send, or the
    ///   sending passes the deadline.
    package func sendRowsQuery(_ sql: String, _ params: [PGValue?] = []) throws {
        guard !awaitingRows else { throw KeychainError(errSecInternalError, "a query was sent to \(serverName) before the answer to the last one was read") }
        try send(params, until: .after(seconds: roundTripTimeout)) { conn, values, lengths, formats in
            let types = params.map { $0?.typeOID ?? 0 }
            return PQsendQueryParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
        awaitingRows = true
    }

    /// The answer to the query `sendRowsQuery` sent, waiting for it (a round trip's
    /// deadline from now).
    /// - Throws: the mapped error of `PostgresFailure`; errSecNotAvailable at the deadline.
    package func receiveRows() throws -> PGRows {
        let conn = try live()
        guard awaitingRows else { throw KeychainError(errSecInternalError, "no query to \(serverName) awaits its answer") }
        awaitingRows = false
        let result = try answer(conn, until: .after(seconds: roundTripTimeout))
        guard let result else { throw PGResult.malformed("no result") }
        return try PGRows(taking: result)
    }

    /// Reads and drops the answer to a query `sendRowsQuery` sent, if one is awaited (a
    /// scan that stopped early); never throws (a connection that cannot give it within
    /// the deadline is closed).
    package func discardRows() {
        guard awaitingRows, let handle else { return }
        awaitingRows = false
        if let result = try? answer(handle, until: .after(seconds: roundTripTimeout)) { PQclear(result) }
    }

    /// Whether a query sent by `sendRowsQuery` awaits `receiveRows`.
    private var awaitingRows = false

    /// Runs `sql` as a statement prepared once per server session under a name made of its
    /// text (`kc_` and 16 hex digits of its BLAKE2b): one name is one statement for every kc
    /// that shares a server connection (behind PgBouncer), whatever order each prepared its
    /// statements in. The parameter types are fixed by the first call (nil lets the server
    /// infer one).
    ///
    /// Behind a transaction pool that does not carry prepared statements between server
    /// connections (PgBouncer before 1.21, or without `max_prepared_statements`), a
    /// statement is found missing (SQLSTATE 26000) or already there (42P05). The first time,
    /// this connection stops preparing statements for good: outside a transaction the
    /// statement is run again unprepared; inside one (which the error aborted)
    /// `SessionStateLost` is thrown, and `PostgresItemStore.transaction` runs the
    /// transaction again.
    @discardableResult
    package func executePrepared(_ sql: String, _ params: [PGValue?]) throws -> PGResult {
        guard preparing else { return try execute(sql, params) }
        let name: String
        if let known = names[sql] {
            name = known
        } else {
            name = "kc_" + Hex.encode(Hashing.blake2b(Array(sql.utf8), length: 16)).prefix(16)
            names[sql] = name
        }
        do {
            if !prepared.contains(name) {
                let types = params.map { $0?.typeOID ?? 0 }
                let result = try roundTrip([]) { conn, _, _, _ in
                    PQsendPrepare(conn, name, sql, Int32(params.count), types)
                }
                PQclear(result)
                prepared.insert(name)
            }
            let result = try roundTrip(params) { conn, values, lengths, formats in
                PQsendQueryPrepared(conn, name, Int32(params.count), values, lengths, formats, 1)
            }
            defer { PQclear(result) }
            guard let result else { return PGResult(rows: [], affectedRows: 0) }
            return try PGResult(copying: result)
        } catch let e as KeychainError where lastSQLState == "26000" || lastSQLState == "42P05" {
            preparing = false
            prepared = []
            guard !inTransaction else { throw SessionStateLost(underlying: e) }
            return try execute(sql, params)
        }
    }

    /// A prepared statement was missing or already there inside a transaction: a pool
    /// switched server connections under it. The transaction was aborted; run it again
    /// (this connection no longer prepares statements).
    package struct SessionStateLost: Error {
        /// The server's error.
        package let underlying: KeychainError
    }

    /// Opens a transaction: READ COMMITTED for a write (the compare-and-swap on the
    /// generation orders writers), else a REPEATABLE READ READ ONLY snapshot (one
    /// consistent view, no locks).
    package func begin(readOnlySnapshot: Bool) throws {
        try execute(readOnlySnapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL READ COMMITTED")
        inTransaction = true
    }

    /// Commits the open transaction.
    /// - Throws: the mapped error; the transaction is over either way.
    package func commit() throws {
        defer { inTransaction = false }
        try execute("COMMIT")
    }

    /// Rolls the open transaction back; never throws (on a lost connection there is
    /// nothing left to roll back; a server that does not answer within the deadline has
    /// its connection closed, which ends the transaction too).
    package func rollback() {
        inTransaction = false
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        discardRows()
        if let result = try? roundTrip([], { conn, _, _, _ in PQsendQuery(conn, "ROLLBACK") }) { PQclear(result) }
    }

    // MARK: - Round trips with a deadline

    /// libpq's connection when it is up. - Throws: errSecNotAvailable when it is lost,
    /// errSecInteractionNotAllowed once `gate` was shut.
    func live() throws -> OpaquePointer {
        if gate.isRevoked {
            close()
            throw gate.lockedError(serverName)
        }
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            lastSQLState = "08003"
            throw KeychainError(
                errSecNotAvailable, "lost the PostgreSQL server \(serverName)",
                hint: "check that the server is up, then try again")
        }
        return handle
    }

    /// The libpq call that sends a statement: the connection, then `params` laid out.
    private typealias Sender = (OpaquePointer, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> Int32

    /// One round trip: sends with `sender` and reads the whole answer within
    /// `roundTripTimeout`; answers its first result (the caller clears it), checked.
    /// - Throws: the mapped error; errSecNotAvailable at the deadline.
    private func roundTrip(_ params: [PGValue?], _ sender: Sender) throws -> OpaquePointer? {
        let deadline = Deadline.after(seconds: roundTripTimeout)
        try send(params, until: deadline, sender)
        return try answer(try live(), until: deadline)
    }

    /// Sends a statement with `sender` and flushes it to the server by `deadline`.
    private func send(_ params: [PGValue?], until deadline: Deadline, _ sender: Sender) throws {
        let conn = try live()
        let sent = withParams(params) { values, lengths, formats in sender(conn, values, lengths, formats) }
        guard sent == 1 else { throw lostError(conn) }
        while true {
            let r = PQflush(conn)
            if r == 0 { return }
            guard r > 0 else { throw lostError(conn) }
            let revents = try wait(conn, events: Int16(POLLIN | POLLOUT), until: deadline)
            if revents & Int16(POLLIN) != 0, PQconsumeInput(conn) != 1 { throw lostError(conn) }
        }
    }

    /// Reads the whole answer to the statement sent by `deadline`: its first result (the
    /// caller clears it), checked; the others dropped.
    private func answer(_ conn: OpaquePointer, until deadline: Deadline) throws -> OpaquePointer? {
        var first: OpaquePointer?
        do {
            while true {
                while PQisBusy(conn) == 1 {
                    _ = try wait(conn, events: Int16(POLLIN), until: deadline)
                    guard PQconsumeInput(conn) == 1 else { throw lostError(conn) }
                }
                guard let next = PQgetResult(conn) else { break }
                if first == nil { first = next } else { PQclear(next) }
            }
            try check(first, conn)
            timedOut = false
            return first
        } catch {
            PQclear(first)
            throw error
        }
    }

    /// Waits until libpq's socket is ready for `events`, at most until `deadline`;
    /// answers what poll saw. At the deadline the statement is cancelled and the
    /// connection closed; when `gate` was shut, the connection is closed at once.
    /// - Throws: errSecNotAvailable at the deadline; errSecInteractionNotAllowed when shut.
    private func wait(_ conn: OpaquePointer, events: Int16, until deadline: Deadline) throws -> Int16 {
        while true {
            if gate.isRevoked {
                close()
                throw gate.lockedError(serverName)
            }
            let remaining = Self.milliseconds(until: deadline)
            guard remaining > 0 else { throw expire(conn) }
            var p = pollfd(fd: PQsocket(conn), events: events, revents: 0)
            let rc = poll(&p, 1, Int32(min(remaining, 1_000)))
            if rc > 0 && !gate.isRevoked { return p.revents }
            if rc < 0 && errno != EINTR { throw lostError(conn) }
        }
    }

    /// A round trip passed its deadline: asks the server to cancel the statement (a cancel
    /// request on a connection of its own, waited for at most `cancelWait` seconds, so that
    /// a statement waiting for a lock does not run later), closes the connection, and
    /// answers the error.
    private func expire(_ conn: OpaquePointer) -> KeychainError {
        if let cancel = PQgetCancel(conn) {
            let request = CancelRequest(cancel)
            if let thread = try? BackgroundThread<Bool>({ request.run() }) {
                thread.detach()
                let until = Deadline.after(seconds: Self.cancelWait)
                while !request.isDone && Deadline.now < until { usleep(10_000) }
            }
        }
        close()
        inTransaction = false
        timedOut = true
        lastSQLState = "57014"
        let seconds = roundTripTimeout < 10 ? String(format1(roundTripTimeout)) : String(Int(roundTripTimeout))
        return KeychainError(
            errSecNotAvailable, "the PostgreSQL server \(serverName) did not answer within \(seconds) s; the statement was cancelled",
            hint: "a lock held on the server or a stalled network; check the server, then try again (KC_TEAM_ROUND_TRIP_TIMEOUT sets the deadline)")
    }

    /// How long an expired round trip waits for its cancel request: 2 s.
    static let cancelWait = 2.0

    /// `x` with one decimal.
    private func format1(_ x: Double) -> String {
        let tenths = Int((x * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Lays `params` out as libpq wants them (all binary) for the call of `body`.
    private func withParams<R>(_ params: [PGValue?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        let buffers: [[UInt8]?] = params.map { $0?.binary }
        let lengths = buffers.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: params.count)
        // Each value's bytes live in one allocation for the call; empty values get a
        // non-NULL pointer (NULL means SQL NULL to libpq).
        var pointers: [UnsafeMutablePointer<UInt8>?] = buffers.map { b in
            guard let b else { return nil }
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(b.count, 1))
            p.initialize(repeating: 0, count: max(b.count, 1))
            if !b.isEmpty { p.update(from: b, count: b.count) }
            return p
        }
        defer {
            for (i, p) in pointers.enumerated() {
                guard let p else { continue }
                // Parameters are ciphertext or blind indexes; wiped all the same.
                p.update(repeating: 0, count: max(buffers[i]?.count ?? 1, 1))
                p.deallocate()
            }
            pointers.removeAll()
        }
        statementsSent += 1
        let cValues: [UnsafePointer<CChar>?] = pointers.map { $0.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) } }
        return cValues.withUnsafeBufferPointer { v in
            lengths.withUnsafeBufferPointer { l in
                formats.withUnsafeBufferPointer { f in body(v.baseAddress, l.baseAddress, f.baseAddress) }
            }
        }
    }

    /// Throws the mapped error unless `result` is a success.
    private func check(_ result: OpaquePointer?, _ conn: OpaquePointer) throws {
        if let result {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                lastSQLState = nil
                return
            }
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            if let state, PQstatus(conn) == CONNECTION_OK {
                lastSQLState = state
                throw PostgresFailure.error(sqlState: state, message: primary ?? "no message", label: serverName)
            }
        }
        // No answer, or an answer on a connection that died: the server is gone.
        throw lostError(conn)
    }

    /// The error for a connection lost without an answer.
    private func lostError(_ conn: OpaquePointer) -> KeychainError {
        let message = PQerrorMessage(conn).map { String(cString: $0) }?.trimmedLines ?? "no answer"
        lastSQLState = "08006"
        inTransaction = false
        return KeychainError(
            errSecNotAvailable, "lost the PostgreSQL server \(serverName): \(message)",
            hint: "check that the server is up, then try again")
    }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

extension String {
    /// The lines joined by "; ", without the trailing newline libpq ends messages with.
    var trimmedLines: String {
        split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(String(drop(while: isSpace).reversed()).drop(while: isSpace).reversed())
    }

    /// Each double-quoted part ("…") replaced by `"…"`.
    var withoutQuotedParts: String {
        var out = "", quoted = false
        for c in self {
            if c == "\"" {
                if !quoted { out += "\"…\"" }
                quoted.toggle()
            } else if !quoted {
                out.append(c)
            }
        }
        return out
    }

    /// Every occurrence of `needle` replaced by `replacement`.
    func replacingAll(_ needle: String, with replacement: String) -> String {
        let hay = Array(utf8), pin = Array(needle.utf8)
        guard !pin.isEmpty, hay.count >= pin.count else { return self }
        var out: [UInt8] = [], i = 0
        while i < hay.count {
            if i + pin.count <= hay.count, hay[i..<(i + pin.count)].elementsEqual(pin) {
                out += Array(replacement.utf8)
                i += pin.count
            } else {
                out.append(hay[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
