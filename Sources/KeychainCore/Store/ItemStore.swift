/// The narrow interface between the keychain and its storage (`docs/design.md`, "Store"):
/// rows of ids, class, blind indexes and ciphertexts; lookups by blind index; transactions.
/// Nothing here knows SQL, rowids or SQLite error codes, so a second backend (the planned
/// PostgreSQL team keychain) can implement it and run the same conformance tests.
protocol ItemStore: AnyObject {
    /// Runs `body` in one transaction; a write transaction holds the write lock from its
    /// start (no two writers interleave) and rolls back when `body` throws.
    func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T
    func readKeychainRecord() throws -> KeychainRecord
    func writeKeychainRecord(_ record: KeychainRecord) throws
    func readState() throws -> StateRecord
    func writeState(_ state: StateRecord) throws
    /// Calls `body` for each candidate row in insertion order until it returns false.
    func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws
    /// Inserts a row. - Throws: `errSecDuplicateItem` when the primary-key fingerprint exists.
    func insert(_ row: ItemRow) throws
    /// Replaces the row with the same item id. - Throws: `errSecDuplicateItem` on a
    /// primary-key collision.
    func replace(_ row: ItemRow) throws
    /// Deletes the row with this item id.
    func delete(itemID: [UInt8]) throws
    /// Calls `body` with (item id, class, row version) of every row.
    func forEachVersion(_ body: (_ itemID: [UInt8], _ classCode: String, _ rowVersion: UInt64) throws -> Void) throws
    /// Moves every committed change into the main file and empties the log.
    func compactLog() throws
    /// Writes a consistent copy of the whole store into the new, empty file at `path`
    /// (created 0600 by the caller) while other processes keep using the store.
    func copy(toNewFile path: String) throws
    /// Runs `body` (a bulk insert) with a larger page cache, given back afterwards: the blind
    /// indexes are random keys, so a big insert touches index pages all over the file.
    func withBulkCache<T>(_ body: () throws -> T) throws -> T
}
