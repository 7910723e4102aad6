internal import CSQLite

/// A prepared statement with typed binding and column access.
final class Statement {
    private let stmt: OpaquePointer
    private unowned let database: Database

    init(_ stmt: OpaquePointer, database: Database) {
        self.stmt = stmt
        self.database = database
    }

    deinit { sqlite3_finalize(stmt) }

    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds a blob (nil binds NULL) at a 1-based index.
    func bind(_ index: Int32, _ bytes: [UInt8]?) {
        guard let bytes else { sqlite3_bind_null(stmt, index); return }
        bytes.withUnsafeBytes { b in
            // A zero-length blob must still bind as a blob, not NULL.
            _ = sqlite3_bind_blob(stmt, index, b.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(stmt, index, value)
    }

    func bind(_ index: Int32, _ text: String) {
        sqlite3_bind_text(stmt, index, text, -1, Self.transient)
    }

    /// Steps once: true when a row is available.
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw Database.error(rc, db: database.rawHandle, context: "keychain storage")
        }
    }

    /// Runs to completion.
    func run() throws {
        while try step() {}
    }

    /// The storage class SQLite holds for a column of the current row.
    enum StorageClass { case integer, real, text, blob, null }

    func storageClass(_ column: Int32) -> StorageClass {
        switch sqlite3_column_type(stmt, column) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    func blob(_ column: Int32) -> [UInt8]? {
        if sqlite3_column_type(stmt, column) == SQLITE_NULL { return nil }
        let count = Int(sqlite3_column_bytes(stmt, column))
        guard count > 0, let base = sqlite3_column_blob(stmt, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The column's bytes, valid only inside `body` (no copy).
    func withBlob<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let count = Int(sqlite3_column_bytes(stmt, column))
        guard count > 0, let base = sqlite3_column_blob(stmt, column) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    func int(_ column: Int32) -> Int64 {
        sqlite3_column_int64(stmt, column)
    }

    /// The column's text, every byte of it (a NUL inside is kept, not a terminator), or nil
    /// when it is not valid UTF-8.
    func text(_ column: Int32) -> String? {
        guard let c = sqlite3_column_text(stmt, column) else { return nil }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(validating: UnsafeBufferPointer(start: c, count: count), as: UTF8.self)
    }
}
