import CPostgres
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// One synchronous connection to a PostgreSQL server through libpq (`docs/design.md`,
/// "The PostgreSQL client"): binary parameters and results, prepared statements for the
/// hot lookups, errors mapped by SQLSTATE (`PostgresFailure`). The team agent serves one
/// request at a time, so a call that waits for the server blocks nobody.
///
///     let c = try PostgresConnection(dsn: "postgresql://kc@db.example/kc?sslmode=verify-full")
///     let r = try c.execute("SELECT generation FROM kc_keychains WHERE keychain_id = $1", [.bytes(id)])
///
/// Not thread-safe: one owner at a time (the agent's serving thread).
package final class PostgresConnection {
    /// The connection string it was opened with (may hold a password: never print it).
    package let dsn: String
    /// The connect timeout in seconds, kept for `reconnect()`.
    private let connectTimeout: Int
    /// libpq's connection; nil only after `deinit` began.
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
    /// What messages call the server: host, port and database, never user or password.
    package let serverName: String

    /// Connects to `dsn` (a libpq URI or key=value string) within `connectTimeout` seconds.
    /// - Throws: errSecNotAvailable ("cannot reach the PostgreSQL server …") with libpq's
    ///   message, from which the password is removed; errSecParam for a malformed DSN.
    package init(dsn: String, connectTimeout: Int = 10) throws {
        self.dsn = dsn
        self.connectTimeout = connectTimeout
        let options = try Self.parse(dsn)
        serverName = Self.describe(options)
        handle = try Self.connect(dsn: dsn, timeout: connectTimeout, options: options, name: serverName)
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Opens a libpq connection and makes its socket close-on-exec.
    private static func connect(dsn: String, timeout: Int, options: [String: String], name: String) throws -> OpaquePointer {
        // connect_timeout first: a value in the DSN itself overrides it (expand_dbname).
        let keywords = ["connect_timeout", "dbname", "fallback_application_name", "client_encoding"]
        let values = [String(max(timeout, 1)), dsn, "kc-team", "UTF8"]
        let conn = withCStrings(keywords) { k in withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
        guard let conn else {
            throw KeychainError(errSecNotAvailable, "cannot reach the PostgreSQL server \(name): out of memory")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            var message = PQerrorMessage(conn).map { String(cString: $0) } ?? "unknown error"
            PQfinish(conn)
            if let password = options["password"], !password.isEmpty {
                message = message.replacingAll(password, with: "***")
            }
            throw KeychainError(errSecNotAvailable, "cannot reach the PostgreSQL server \(name): \(message.trimmedLines)",
                                hint: "check the server, the DSN and the network, then try again")
        }
        setCloseOnExec(conn)
        return conn
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

    /// Whether the connection is lost (libpq's CONNECTION_BAD): `reconnect()` before use.
    package var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Connects again (after a server restart or a lost network): a new session, so the
    /// prepared statements are prepared again and no transaction is open.
    /// - Throws: errSecNotAvailable when the server is still unreachable.
    package func reconnect() throws {
        let options = try Self.parse(dsn)
        let fresh = try Self.connect(dsn: dsn, timeout: connectTimeout, options: options, name: serverName)
        if let handle { PQfinish(handle) }
        handle = fresh
        prepared = []
        inTransaction = false
        lastSQLState = nil
    }

    /// Runs `sql` with binary `params` ($1, $2, …; nil is NULL) and answers its rows in binary.
    /// - Throws: the mapped error of `PostgresFailure`.
    @discardableResult
    package func execute(_ sql: String, _ params: [PGValue?] = []) throws -> PGResult {
        let conn = try live()
        return try run(params) { values, lengths, formats in
            let types = params.map { $0?.typeOID ?? 0 }
            return PQexecParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
    }

    /// Runs `sql` with binary `params` as `execute` does, and answers its rows in place
    /// (`PGRows`): for statements that read many rows, whose values are not all kept.
    /// - Throws: the mapped error of `PostgresFailure`.
    package func executeRows(_ sql: String, _ params: [PGValue?] = []) throws -> PGRows {
        let conn = try live()
        let result = try send(params) { values, lengths, formats in
            let types = params.map { $0?.typeOID ?? 0 }
            return PQexecParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
        guard let result else { throw PGResult.malformed("no result") }
        return try PGRows(taking: result)
    }

    /// Sends `sql` with binary `params` without waiting for its answer, which
    /// `receiveRows` then reads: the server works on it while the caller works on the
    /// answer before (a scan that asks for its next piece while it hashes this one).
    /// - Throws: errSecNotAvailable when the connection is lost or cannot send.
    package func sendRowsQuery(_ sql: String, _ params: [PGValue?] = []) throws {
        let conn = try live()
        guard !awaitingRows else { throw KeychainError(errSecInternalError, "a query was sent to \(serverName) before the answer to the last one was read") }
        let types = params.map { $0?.typeOID ?? 0 }
        let sent = withParams(params) { values, lengths, formats in
            PQsendQueryParams(conn, sql, Int32(params.count), types, values, lengths, formats, 1)
        }
        guard sent == 1 else {
            try check(nil, conn)
            return
        }
        awaitingRows = true
    }

    /// The answer to the query `sendRowsQuery` sent, waiting for it.
    /// - Throws: the mapped error of `PostgresFailure`.
    package func receiveRows() throws -> PGRows {
        let conn = try live()
        guard awaitingRows else { throw KeychainError(errSecInternalError, "no query to \(serverName) awaits its answer") }
        awaitingRows = false
        let result = PQgetResult(conn)
        // The end of the answer (NULL), so that the connection takes the next command.
        while let extra = PQgetResult(conn) { PQclear(extra) }
        do {
            try check(result, conn)
        } catch {
            PQclear(result)
            throw error
        }
        guard let result else { throw PGResult.malformed("no result") }
        return try PGRows(taking: result)
    }

    /// Reads and drops the answer to a query `sendRowsQuery` sent, if one is awaited (a
    /// scan that stopped early); never throws.
    package func discardRows() {
        guard awaitingRows, let handle else { return }
        awaitingRows = false
        while let extra = PQgetResult(handle) { PQclear(extra) }
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
        let conn = try live()
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
                statementsSent += 1
                let result = PQprepare(conn, name, sql, Int32(params.count), types)
                defer { PQclear(result) }
                try check(result, conn)
                prepared.insert(name)
            }
            return try run(params) { values, lengths, formats in
                PQexecPrepared(conn, name, Int32(params.count), values, lengths, formats, 1)
            }
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
    /// nothing left to roll back).
    package func rollback() {
        inTransaction = false
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        statementsSent += 1
        if let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
    }

    // MARK: - Plumbing

    /// libpq's connection when it is up. - Throws: errSecNotAvailable when it is lost.
    private func live() throws -> OpaquePointer {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            lastSQLState = "08003"
            throw KeychainError(errSecNotAvailable, "lost the PostgreSQL server \(serverName)",
                                hint: "check that the server is up, then try again")
        }
        return handle
    }

    /// Calls `send` as `send(_:_:)` does, and copies the result.
    private func run(_ params: [PGValue?], _ send: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> OpaquePointer?) throws -> PGResult {
        let result = try self.send(params, send)
        defer { PQclear(result) }
        guard let result else { return PGResult(rows: [], affectedRows: 0) }
        return try PGResult(copying: result)
    }

    /// Lays `params` out as libpq wants them (all binary), calls `send` and checks its
    /// result, which the caller then owns (and clears).
    private func send(_ params: [PGValue?], _ send: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> OpaquePointer?) throws -> OpaquePointer? {
        let result = withParams(params, send)
        do {
            guard let conn = handle else { throw KeychainError(errSecNotAvailable, "lost the PostgreSQL server \(serverName)") }
            try check(result, conn)
            return result
        } catch {
            PQclear(result)
            throw error
        }
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
        let message = PQerrorMessage(conn).map { String(cString: $0) }?.trimmedLines ?? "no answer"
        lastSQLState = "08006"
        inTransaction = false
        throw KeychainError(errSecNotAvailable, "lost the PostgreSQL server \(serverName): \(message)",
                            hint: "check that the server is up, then try again")
    }

    // MARK: - The connection string

    /// The options libpq reads from `dsn` (`PQconninfoParse`), those given only.
    /// - Throws: errSecParam with libpq's message for a malformed DSN.
    package static func parse(_ dsn: String) throws -> [String: String] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(dsn, &error) else {
            // libpq quotes the token it stumbled on, which may be the password: never repeat it.
            let message = error.map { String(cString: $0) }?.trimmedLines.withoutQuotedParts ?? "out of memory"
            if let error { PQfreemem(error) }
            throw KeychainError(errSecParam, "the PostgreSQL connection string is malformed: \(message)",
                                hint: "check the DSN's quoting and percent-encoding (its text is not repeated here: it may hold a password)")
        }
        defer { PQconninfoFree(options) }
        var out: [String: String] = [:]
        var p = options
        while let keyword = p.pointee.keyword {
            if let value = p.pointee.val { out[String(cString: keyword)] = String(cString: value) }
            p += 1
        }
        return out
    }

    /// `dsn` without its password, for what kc shows others (the join string): unchanged
    /// when it has none, else the same options as a keyword/value string (values quoted).
    /// - Throws: errSecParam for a malformed DSN.
    package static func withoutPassword(_ dsn: String) throws -> String {
        var options = try parse(dsn)
        guard options.removeValue(forKey: "password") != nil else { return dsn }
        return options.sorted { $0.key < $1.key }.map { key, value in
            key + "='" + value.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
        }.joined(separator: " ")
    }

    /// libpq's defaults for what a DSN leaves out (`PQconndefaults`: the PG* variables).
    static func defaults() -> [String: String] {
        guard let options = PQconndefaults() else { return [:] }
        defer { PQconninfoFree(options) }
        var out: [String: String] = [:]
        var p = options
        while let keyword = p.pointee.keyword {
            if let value = p.pointee.val, value.pointee != 0 { out[String(cString: keyword)] = String(cString: value) }
            p += 1
        }
        return out
    }

    /// host:port/dbname of parsed options, for messages.
    static func describe(_ options: [String: String]) -> String {
        let host = options["host"] ?? options["hostaddr"] ?? "(local socket)"
        let port = options["port"].map { ":" + $0 } ?? ""
        let db = options["dbname"].map { "/" + $0 } ?? ""
        return host + port + db
    }

    /// Refuses a DSN that would send a team keychain's traffic over an unverified channel:
    /// a host other than the loopback address or a Unix socket needs `sslmode=verify-full`
    /// (or verify-ca) unless `insecureAllowed` (`--insecure-transport`).
    /// - Throws: errSecParam naming both ways out.
    /// What the DSN leaves out is libpq's default (`PGHOST`, `PGSSLMODE`, …), checked too.
    package static func checkTransport(dsn: String, insecureAllowed: Bool) throws {
        let options = defaults().merging(try parse(dsn)) { _, given in given }
        if insecureAllowed { return }
        let mode = options["sslmode"] ?? "prefer"
        if mode == "verify-full" || mode == "verify-ca" { return }
        let hosts = (options["host"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            + (options["hostaddr"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let remote = hosts.filter { !isLocal($0) }
        guard let first = remote.first else { return }
        throw KeychainError(errSecParam,
                            "refusing to reach the PostgreSQL server \(first) without verified TLS (sslmode is \(mode))",
                            hint: "add sslmode=verify-full to the DSN, or give --insecure-transport on a network you trust")
    }

    /// The loopback address, localhost, a Unix socket folder, or nothing (libpq's default socket).
    private static func isLocal(_ host: String) -> Bool {
        let h = host.trimmingSpaces
        return h.isEmpty || h.hasPrefix("/") || h.hasPrefix("@") || h == "localhost" || h == "127.0.0.1" || h == "::1" || h == "[::1]"
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
