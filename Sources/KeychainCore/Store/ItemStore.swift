/// The narrow interface between the keychain and its storage (`docs/design.md`, "Store"):
/// rows of ids, class, blind indexes and ciphertexts; lookups by blind index; transactions.
/// Nothing here knows SQL, rowids or SQLite error codes, so a second backend (the planned
/// PostgreSQL team keychain) can implement it and run the same conformance tests; the
/// keychain holds its store as `any ItemStore` and never names an implementation, except
/// where `Keychain.create(at:)` / `open(at:)` make the SQLite one for a path.
///
/// Every method is one complete exchange with the store: nothing of a call stays open after
/// it returns but the transaction around it. A store whose client is asynchronous (a
/// database server) implements each method by driving its connection until that answer
/// is in (the agent serves one request at a time, so the wait blocks nobody);
/// `docs/design.md` ("Store") says how the team keychain's store fits.
package protocol ItemStore: AnyObject {
    /// Runs `body` in one transaction; a write transaction holds the write lock from its
    /// start (no two writers interleave) and rolls back when `body` throws.
    func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T
    func readKeychainRecord() throws -> KeychainRecord
    func writeKeychainRecord(_ record: KeychainRecord) throws
    func readState() throws -> StateRecord
    func writeState(_ state: StateRecord) throws
    /// Calls `body` for each candidate row in insertion order until it returns false; each
    /// row comes with the pair fingerprints stored for it.
    func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws
    /// As `forEachRow`, from the first candidate after place `after` in insertion order
    /// (`seq`): one page of a paged search (`Keychain.copyPage`) starts where the last one
    /// stopped without reading the rows before it.
    func forEachRow(_ lookup: RowLookup, after: Int64, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws
    /// Inserts a row and its pairs and answers the place in insertion order it was given (its `seq`).
    /// - Throws: `errSecDuplicateItem` when the primary-key fingerprint exists.
    func insert(_ row: ItemRow) throws -> Int64
    /// Replaces the row with the same item id and place (`seq`), its pairs included.
    /// - Throws: `errSecDuplicateItem` on a primary-key collision.
    func replace(_ row: ItemRow) throws
    /// Deletes the row with this item id, and its pairs.
    func delete(itemID: [UInt8]) throws
    /// A value that changes whenever something other than this connection changed the
    /// store (another process's commit, a byte written into the file): the keychain
    /// verifies the whole store again before it answers from a changed one.
    func changeStamp() throws -> ChangeStamp
    /// Whether the store's location still names what this store opened (a file renamed
    /// over a keychain that a process holds open is another store).
    func isStillTheOpenedFile() -> Bool
    /// Calls `body` with (seq, value) of every entry of `index`, read from the index itself
    /// (never from the table): lookups trust indexes to find every row, so the integrity
    /// scan compares each index with the rows it indexes.
    func forEachIndexEntry(_ index: StoreIndex, _ body: (Int64, UnsafeRawBufferPointer) throws -> Void) throws
    /// Checks what lies beneath the rows: the schema is kc's own and the storage engine's
    /// structures (indexes included) agree with the rows. Nil when sound.
    func structuralProblems() throws -> String?
    /// Moves every committed change into the main file and empties the log.
    func compactLog() throws
    /// Writes a consistent copy of the whole store into the new, empty file at `path`
    /// (created 0600 by the caller) while other processes keep using the store, and
    /// answers the copy, opened.
    func copy(toNewFile path: String) throws -> any ItemStore
    /// A second connection to this same store with nothing cached (what is stored now,
    /// not what this connection read earlier), or nil when the store's location now names
    /// another store (a file replaced or removed under this connection).
    func freshConnection() throws -> (any ItemStore)?
    /// Runs `body` (a bulk insert) with a larger page cache, given back afterwards: the blind
    /// indexes are random keys, so a big insert touches index pages all over the file.
    func withBulkCache<T>(_ body: () throws -> T) throws -> T
}

extension ItemStore {
    /// The rows after `after`, read by `forEachRow` and passed over here: correct for any
    /// store whose rows come in insertion order; a store that can start at a place (SQLite)
    /// implements it itself.
    package func forEachRow(_ lookup: RowLookup, after: Int64, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {
        try forEachRow(lookup, includeData: includeData) { row in row.seq > after ? try body(row) : true }
    }
}
