internal import CSQLite

/// One SQLite connection, opened the one way kc opens every keychain (`docs/format.md` §1):
/// `busy_timeout` first, then the per-connection pragmas. WAL is set once, at creation.
final class Database {
    /// How long a writer waits for another writer before giving up.
    static let busyTimeoutMilliseconds: Int32 = 30_000

    private var handle: OpaquePointer?
    private var statements: [String: Statement] = [:]
    let path: String

    /// Opens an existing file read-write; never creates one (the caller pre-creates files
    /// with mode 0600, see `FileSafety`).
    init(path: String) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK, db != nil else {
            let error = Self.error(rc, db: db, context: "cannot open \(path)")
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        // busy_timeout before anything else: the first statement may already meet a writer.
        sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
        // SQLite's defences against a crafted file (docs/security.md, "A crafted schema"):
        // no writable schema or shadow-table writes, nothing from the schema runs as code,
        // and a trigger or view that slipped into the file would not run anyway (the schema
        // is also compared with kc's own at open, `SQLiteItemStore.checkSchema`).
        for (op, value) in [
            (SQLITE_DBCONFIG_DEFENSIVE, Int32(1)), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0),
            (SQLITE_DBCONFIG_ENABLE_TRIGGER, 0), (SQLITE_DBCONFIG_ENABLE_VIEW, 0)
        ] {
            var applied: Int32 = -1
            let rc = kc_sqlite3_db_config_bool(db, op, value, &applied)
            guard rc == SQLITE_OK, applied == value else {
                sqlite3_close_v2(db)
                handle = nil
                throw KeychainError(errSecInternalError, "SQLite \(Self.sqliteVersion) refused a defensive setting (\(op))")
            }
        }
        try exec("PRAGMA synchronous=FULL; PRAGMA secure_delete=ON; PRAGMA temp_store=MEMORY; PRAGMA trusted_schema=OFF;")
    }

    /// An in-memory database (for working out the schema kc writes).
    static func inMemory() throws -> Database { try Database(path: ":memory:") }

    /// The rowid of the last row this connection inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `PRAGMA data_version`: changes when another connection committed since this
    /// connection's previous read, never for this connection's own commits.
    func dataVersion() throws -> Int64 {
        let s = try statement("PRAGMA data_version")
        defer { s.reset() }
        guard try s.step() else { throw KeychainError(errSecDecode, "\(path): no data_version") }
        return s.int(0)
    }

    /// Every entry of `sqlite_schema` as "type|name|tbl_name|sql", sorted: what a crafted
    /// file would have to change to add an index, trigger, view or table of its own.
    func schemaEntries() throws -> [String] {
        let s = try statement("SELECT type, name, tbl_name, sql FROM sqlite_schema")
        defer { s.reset() }
        var entries: [String] = []
        while try s.step() {
            entries.append([s.text(0) ?? "?", s.text(1) ?? "?", s.text(2) ?? "?", s.text(3) ?? "NULL"].joined(separator: "|"))
        }
        return entries.sorted()
    }

    /// SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), one line per step ("SEARCH …",
    /// "SCAN …"): how the tests show that a lookup reads indexes only.
    func queryPlan(_ sql: String) throws -> [String] {
        let s = try statement("EXPLAIN QUERY PLAN " + sql)
        defer { s.reset() }
        var steps: [String] = []
        while try s.step() { steps.append(s.text(3) ?? "?") }
        return steps
    }

    /// `PRAGMA integrity_check`: nil when SQLite finds the file sound (b-trees, and every
    /// index entry against its table row), else SQLite's first findings.
    func integrityProblems() throws -> String? {
        let s = try statement("PRAGMA integrity_check(20)")
        defer { s.reset() }
        var lines: [String] = []
        while try s.step() { lines.append(s.text(0) ?? "?") }
        return lines == ["ok"] ? nil : lines.joined(separator: "; ")
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Copies the whole database into `destination` (an open, empty database) with SQLite's
    /// online backup: one consistent snapshot, taken under a read transaction, while other
    /// connections go on reading and writing.
    func copy(into destination: Database) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw Self.error(sqlite3_errcode(destination.handle), db: destination.handle, context: "backup")
        }
        let rc = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else { throw Self.error(rc, db: destination.handle, context: "backup") }
        guard finish == SQLITE_OK else { throw Self.error(finish, db: destination.handle, context: "backup") }
    }

    /// Runs SQL with no results.
    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if let message { sqlite3_free(message) }
        guard rc == SQLITE_OK else { throw Self.error(rc, db: handle, context: "keychain storage") }
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw Self.error(rc, db: handle, context: "keychain storage")
        }
        let statement = Statement(stmt, database: self)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` for writes (the write lock is taken
    /// at once, so no two writers interleave), `BEGIN` for consistent reads. Rolls back
    /// when `body` throws.
    func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T {
        try exec(write ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    /// The number of rows the last statement changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`, retried until it completes (old page images,
    /// such as a previous master-key wrap, leave the -wal file).
    func checkpointTruncate() throws {
        // A statement left mid-step holds a read snapshot that would block the checkpoint.
        for statement in statements.values { statement.reset() }
        for _ in 0..<50 {
            var logFrames: Int32 = 0, checkpointed: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
            if rc == SQLITE_OK { return }
            if rc != SQLITE_BUSY && rc != SQLITE_LOCKED { throw Self.error(rc, db: handle, context: "checkpoint") }
        }
        throw KeychainError(errSecNotAvailable, "could not checkpoint \(path): another process keeps it busy")
    }

    /// The SQLite library version.
    static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// Maps an SQLite result code to a kc error (as Apple's `osstatus_for_s3e`).
    static func error(_ rc: Int32, db: OpaquePointer?, context: String) -> KeychainError {
        let detail = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        var error = userError(rc, detail: detail, context: context)
        error.cause = .sqlite(code: db.map { sqlite3_extended_errcode($0) } ?? rc, message: detail)
        return error
    }

    /// What a user is told of an SQLite result code.
    private static func userError(_ rc: Int32, detail: String, context: String) -> KeychainError {
        switch rc & 0xFF {
        case SQLITE_CONSTRAINT:
            return KeychainError(errSecDuplicateItem)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return KeychainError(
                errSecNotAvailable, "\(context): the keychain stayed busy with another writer for 30 s",
                hint: "try again; if it persists, look for a stuck kc process")
        case SQLITE_NOMEM:
            return KeychainError(errSecAllocate)
        case SQLITE_IOERR:
            return KeychainError(errSecIO, "\(context): I/O error (\(detail))")
        case SQLITE_READONLY, SQLITE_PERM:
            return KeychainError(errSecReadOnly, "\(context): the keychain file or its folder is read-only (\(detail))")
        case SQLITE_FULL:
            return KeychainError(errSecDiskFull, "\(context): the disk is full; nothing was written")
        case SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_FORMAT:
            return KeychainError(errSecDecode, "\(context): not a kc keychain, or the file is damaged (\(detail))")
        case SQLITE_CANTOPEN:
            return KeychainError(errSecNoSuchKeychain, "\(context): \(detail)")
        default:
            return KeychainError(errSecNotAvailable, "\(context): \(detail)")
        }
    }

    var rawHandle: OpaquePointer? { handle }
}
