#if canImport(Glibc)
import Glibc
#endif

/// `ItemStore` on one SQLite file (`docs/format.md` §1).
package final class SQLiteItemStore: ItemStore {
    let database: Database
    private static let indexColumns = IndexColumn.allCases
    private static let indexSQL = IndexColumn.allCases.map { "i_\($0.rawValue)" }
    private static let rowColumns = "item_id, class, row_version, pk, " + indexSQL.joined(separator: ", ") + ", wrapped_key, metadata"

    /// Opens an existing keychain file after `FileSafety` checks; migrates an older schema,
    /// refuses a newer one or a file that is not a kc keychain.
    /// - Parameter checkFile: run `FileSafety.checkKeychainFile` first (false only for a
    ///   second connection to a file this process already checked and holds open: see
    ///   `freshConnection`).
    package init(openingExisting path: String, checkFile: Bool = true) throws {
        if checkFile { try FileSafety.checkKeychainFile(at: path) }
        let before = Self.identity(of: path)
        database = try Database(path: path)
        let appID = try Migrations.applicationID(database)
        // The file SQLite opened is the one the path names before and after: a later
        // replacement of the path can then be told from a change of this file.
        guard let before, before == Self.identity(of: path) else {
            throw KeychainError(errSecNotAvailable, "\(path) was replaced while it was being opened", hint: "try again")
        }
        fileIdentity = before
        guard appID == Migrations.applicationID else {
            throw KeychainError(
                errSecDecode, "\(path) is an SQLite database but not a kc keychain",
                hint: "check the path given with -k or KC_KEYCHAIN")
        }
        try Migrations.migrate(database)
        try checkSchema()
    }

    /// (device, inode) of the file this store's connection opened.
    private(set) var fileIdentity: [Int64] = []

    static func identity(of path: String) -> [Int64]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return [Int64(st.st_dev), Int64(bitPattern: UInt64(st.st_ino))]
    }

    package func isStillTheOpenedFile() -> Bool {
        database.path == ":memory:" || Self.identity(of: database.path) == fileIdentity
    }

    /// A new, empty keychain store in memory (no file is ever written): what a dry run works
    /// on when the keychain it would fill does not exist yet. The caller writes the header.
    package init(inMemory: Void) throws {
        database = try Database.inMemory()
        try database.exec("PRAGMA application_id = \(Migrations.applicationID)")
        try Migrations.migrate(database)
        try checkSchema()
    }

    /// Refuses a file whose schema is not exactly the one kc writes: an extra or changed
    /// index, trigger, view or table (a stale index that lookups would read instead of the
    /// table, a trigger that rewrites rows) makes the file untrusted as a whole.
    /// - Throws: errSecDecode.
    func checkSchema() throws {
        let version = try Migrations.userVersion(database)
        let found = try database.schemaEntries(), expected = try Migrations.expectedSchema(version: version)
        guard found == expected else {
            let odd = Set(found).symmetricDifference(expected).map { $0.split(separator: "|").prefix(2).joined(separator: " ") }.sorted()
            throw KeychainError(
                errSecDecode,
                "\(database.path) has a schema kc did not write (\(odd.prefix(3).joined(separator: ", "))): the file was tampered with",
                hint: "restore the keychain from a backup")
        }
    }

    /// Creates a new keychain file (0600, WAL) and its schema; the caller writes the header.
    package init(creating path: String) throws {
        try FileSafety.createKeychainFile(at: path)
        do {
            database = try Database(path: path)
            try database.exec("PRAGMA journal_mode=WAL")
            try database.exec("PRAGMA application_id = \(Migrations.applicationID)")
            try Migrations.migrate(database)
            try checkSchema()
            fileIdentity = Self.identity(of: path) ?? []
        } catch {
            FileSafety.removeKeychainFiles(path)
            throw error
        }
    }

    package func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T {
        try database.transaction(write: write, body)
    }

    package func withBulkCache<T>(_ body: () throws -> T) throws -> T {
        // 64 MiB instead of SQLite's 2 MiB: 100,000 items go in at about 23,000 a second
        // instead of 16,000 (docs/performance.md). Shrinking it again frees the pages.
        try database.exec("PRAGMA cache_size=-65536")
        defer { try? database.exec("PRAGMA cache_size=-2000") }
        return try body()
    }

    package func readKeychainRecord() throws -> KeychainRecord {
        let s = try database.statement(
            """
            SELECT format_version, keychain_id, key_generation, kdf_algorithm, kdf_opslimit,
                   kdf_memlimit, kdf_salt, wrapped_master_key, id FROM kc_keychain
            """)
        defer { s.reset() }
        guard try s.step() else {
            throw KeychainError(errSecDecode, "\(database.path) has no keychain header: the file is damaged or unfinished")
        }
        guard let id = s.blob(1), let salt = s.blob(6), let wrap = s.blob(7),
            let format = UInt32(exactly: s.int(0)), let gen = UInt32(exactly: s.int(2)),
            let alg = UInt32(exactly: s.int(3)), let ops = UInt64(exactly: s.int(4)), let mem = UInt64(exactly: s.int(5))
        else {
            throw KeychainError(errSecDecode, "\(database.path) has a malformed keychain header")
        }
        let record = KeychainRecord(
            formatVersion: format, keychainID: id, keyGeneration: gen, kdfAlgorithm: alg,
            kdfOpslimit: ops, kdfMemlimit: mem, kdfSalt: salt, wrappedMasterKey: wrap)
        try requireOnlyRow(s, idColumn: 8, of: "password record")
        var withSlots = record
        withSlots.slots = try readKeySlots()
        return withSlots
    }

    /// The rows of `kc_keyslots` in id order, each checked for its storage classes and a
    /// kind this kc knows (an unknown kind is a file it cannot check: errSecDecode).
    private func readKeySlots() throws -> [KeySlotRow] {
        let s = try database.statement("SELECT id, kind, created, fields FROM kc_keyslots ORDER BY id")
        defer { s.reset() }
        var slots: [KeySlotRow] = []
        while try s.step() {
            guard s.storageClass(0) == .integer, s.storageClass(1) == .text, s.storageClass(2) == .integer,
                s.storageClass(3) == .blob, let name = s.text(1), let fields = s.blob(3),
                let created = UInt64(exactly: s.int(2)), s.int(0) > KeySlotRow.passwordSlotID
            else {
                throw KeychainError(
                    errSecDecode, "a key slot of \(database.path) has a column of a type kc never writes: the file was tampered with",
                    hint: "restore the keychain from a backup")
            }
            guard let kind = KeySlotKind(rawValue: name) else {
                throw KeychainError(
                    errSecDecode, "\(database.path) has a key slot of a kind this kc does not know (\(name.prefix(32))): it cannot check it",
                    hint: "upgrade kc, or restore the keychain from a backup")
            }
            // Each kind's layout, checked before anything reads it (the MAC is checked later).
            switch kind {
            case .recovery: _ = try RecoverySlot(fields: fields)
            case .tpm2: try TPM2SlotLayout.check(fields)
            }
            slots.append(KeySlotRow(id: s.int(0), kind: kind, created: created, fields: fields))
        }
        return slots
    }

    /// The header's tables hold one row, id 1 (`CHECK (id = 1)`): a second one, which only
    /// a writer that turned SQLite's check constraints off can add (an older password record
    /// put beside the live one, outside the header MAC), is tampering at every read, not
    /// only for `kc verify`'s integrity check. Steps past the current row: call it once its
    /// columns are read.
    private func requireOnlyRow(_ s: Statement, idColumn: Int32, of what: String) throws {
        let first = s.int(idColumn)
        guard first == 1, try !s.step() else {
            throw KeychainError(
                errSecDecode, "\(database.path) has more than one \(what), or one that is not row 1: the file was tampered with",
                hint: "restore the keychain from a backup")
        }
    }

    package func writeKeychainRecord(_ r: KeychainRecord) throws {
        let s = try database.statement(
            """
            INSERT OR REPLACE INTO kc_keychain(id, format_version, keychain_id, key_generation, kdf_algorithm,
                kdf_opslimit, kdf_memlimit, kdf_salt, wrapped_master_key) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        s.bind(1, Int64(r.formatVersion))
        s.bind(2, r.keychainID)
        s.bind(3, Int64(r.keyGeneration))
        s.bind(4, Int64(r.kdfAlgorithm))
        s.bind(5, Int64(bitPattern: r.kdfOpslimit))
        s.bind(6, Int64(bitPattern: r.kdfMemlimit))
        s.bind(7, r.kdfSalt)
        s.bind(8, r.wrappedMasterKey)
        try s.run()
        try database.exec("DELETE FROM kc_keyslots")
        for slot in r.slots {
            let insert = try database.statement("INSERT INTO kc_keyslots(id, kind, created, fields) VALUES (?, ?, ?, ?)")
            insert.bind(1, slot.id)
            insert.bind(2, slot.kind.rawValue)
            insert.bind(3, Int64(bitPattern: slot.created))
            insert.bind(4, slot.fields)
            try insert.run()
        }
    }

    package func readState() throws -> StateRecord {
        let s = try database.statement(
            """
            SELECT min_writer_version, generation, item_count, accumulator, idle_timeout, max_timeout, mac
            , id FROM kc_state
            """)
        defer { s.reset() }
        guard try s.step() else {
            throw KeychainError(errSecDecode, "\(database.path) has no keychain state: the file is damaged or unfinished")
        }
        guard let acc = s.blob(3), let mac = s.blob(6),
            let minWriter = UInt32(exactly: s.int(0)), let gen = UInt64(exactly: s.int(1)),
            let count = UInt64(exactly: s.int(2)), let idle = UInt64(exactly: s.int(4)), let cap = UInt64(exactly: s.int(5))
        else {
            throw KeychainError(errSecDecode, "\(database.path) has a malformed keychain state")
        }
        let state = StateRecord(
            minWriterVersion: minWriter, generation: gen, itemCount: count, accumulator: acc,
            idleTimeout: idle, maxTimeout: cap, mac: mac)
        try requireOnlyRow(s, idColumn: 7, of: "header state")
        return state
    }

    package func writeState(_ st: StateRecord) throws {
        let s = try database.statement(
            """
            INSERT OR REPLACE INTO kc_state(id, min_writer_version, generation, item_count, accumulator,
                idle_timeout, max_timeout, mac) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
            """)
        s.bind(1, Int64(st.minWriterVersion))
        s.bind(2, Int64(bitPattern: st.generation))
        s.bind(3, Int64(bitPattern: st.itemCount))
        s.bind(4, st.accumulator)
        s.bind(5, Int64(bitPattern: st.idleTimeout))
        s.bind(6, Int64(bitPattern: st.maxTimeout))
        s.bind(7, st.mac)
        try s.run()
    }

    package func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {
        try forEachRow(lookup, after: Int64.min, includeData: includeData, body)
    }

    /// The scan of a class from a place on (`seq > ?`; the first page's place is the
    /// smallest integer): the table in seq order, which SQLite searches by its rowid, so a
    /// page reads no row of the pages before it (`CopyPageTests`).
    static func scanSQL(columns: String) -> String {
        "SELECT \(columns) FROM kc_items NOT INDEXED WHERE class = ? AND seq > ? ORDER BY seq"
    }

    package func forEachRow(_ lookup: RowLookup, after: Int64, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {
        // Without the data itself, still learn whether there is some (it is bound in the AD).
        // Without the data itself, its storage class: NULL when the item has none.
        // kc_items.seq: a pair lookup joins kc_pairs, which has a seq of its own.
        let columns =
            Self.rowColumns + (includeData ? ", data" : ", CASE typeof(data) WHEN 'null' THEN NULL WHEN 'blob' THEN x'' ELSE 0 END")
            + ", kc_items.seq, kc_items.pclass"
        // Each row's Secret Service pairs: read beside the table, in seq order, by scans; one
        // primary-key search per row for lookups.
        var scanPairs: PairCursor?

        let s: Statement
        switch lookup {
        case .itemID(let id):
            s = try database.statement("SELECT \(columns) FROM kc_items WHERE item_id = ?")
            s.bind(1, id)
        // Fingerprints are keyed per class, so lookups by them do not filter on the class
        // column: a row whose class text was edited is still a candidate, and its opening
        // fails (errSecDecode) instead of the item vanishing silently.
        case .primaryKey(let pk):
            s = try database.statement("SELECT \(columns) FROM kc_items WHERE pk = ?")
            s.bind(1, pk)
        case .indexes(let conditions):
            let whereSQL = conditions.map { "i_\($0.0.rawValue) = ?" }.joined(separator: " AND ")
            s = try database.statement("SELECT \(columns) FROM kc_items WHERE \(whereSQL) AND seq > ? ORDER BY seq")
            for (i, condition) in conditions.enumerated() { s.bind(Int32(i + 1), condition.1) }
            s.bind(Int32(conditions.count + 1), after)
        case .pairs(let fingerprints, let conditions):
            guard let statement = try pairLookup(columns: columns, fingerprints, conditions, after: after) else { return }
            s = statement
        // NOT INDEXED: through the class index SQLite would sort every row of the class in
        // a temporary b-tree (about 1 KB a row, in memory) before the first one; the table
        // itself is already in seq order and is read one row at a time.
        case .scan(let classCode):
            // The rowid (seq) still bounds it: a page starts at its place, not at the start.
            s = try database.statement(Self.scanSQL(columns: columns))
            s.bind(1, classCode)
            s.bind(2, after)
            scanPairs = try PairCursor(database, after: after)
        // The integrity scans: the table's own rows, whatever any index says.
        case .all:
            s = try database.statement("SELECT \(columns) FROM kc_items NOT INDEXED ORDER BY seq")
            scanPairs = try PairCursor(database)
        }
        defer {
            s.reset()
            scanPairs?.reset()
        }
        while try s.step() {
            try checkStorageClasses(s)
            var indexes: [IndexColumn: [UInt8]] = [:]
            for (i, column) in Self.indexColumns.enumerated() {
                if let v = s.blob(Int32(4 + i)) { indexes[column] = v }
            }
            let base = Int32(4 + Self.indexColumns.count)
            guard let id = s.blob(0), let classCode = s.text(1), let pk = s.blob(3),
                let wrapped = s.blob(base), let meta = s.blob(base + 1),
                let version = UInt64(exactly: s.int(2))
            else {
                throw KeychainError(errSecDecode, "a row of \(database.path) is malformed: the keychain is damaged or was tampered with")
            }
            // Sealed data is never empty (nonce and tag alone are 40 bytes).
            if includeData, let data = s.blob(base + 2), data.isEmpty {
                throw KeychainError(errSecDecode, "a row of \(database.path) has an empty data column: the keychain is damaged or was tampered with")
            }
            let seq = s.int(base + 3)
            guard seq > after else { continue }   // a lookup by id or primary key
            // Format 4's protection class: a value kc never writes is a tampered row.
            guard let protection = UInt8(exactly: s.int(base + 4)).flatMap(ProtectionClass.init(rawValue:)) else {
                throw KeychainError(errSecDecode, "a row of \(database.path) has an unknown protection class: the keychain was tampered with")
            }
            let pairs = try scanPairs?.pairs(of: seq) ?? self.pairs(of: seq)
            let row = ItemRow(
                seq: seq, itemID: id, classCode: classCode, rowVersion: version, primaryKey: pk, indexes: indexes,
                pairs: pairs, wrappedKey: wrapped, metadata: meta,
                data: includeData ? s.blob(base + 2) : (s.storageClass(base + 2) == .null ? nil : []),
                protection: protection)
            guard try body(row) else { break }
        }
    }

    /// Every column of a row read by `forEachRow` has the storage class kc writes: BLOB for
    /// ids, fingerprints and ciphertexts (NULL allowed for index columns and data), TEXT
    /// for the class, INTEGER for the version and seq. SQLite converts between TEXT and
    /// BLOB silently, and a TEXT value never equals a BLOB in a lookup: a row with a
    /// changed storage class would hide from lookups (and from UNIQUE) while its bytes
    /// still verify. - Throws: errSecDecode.
    private func checkStorageClasses(_ s: Statement) throws {
        let base = Int32(4 + Self.indexColumns.count)
        var good =
            s.storageClass(0) == .blob && s.storageClass(1) == .text && s.storageClass(2) == .integer
            && s.storageClass(3) == .blob && s.storageClass(base) == .blob && s.storageClass(base + 1) == .blob
            && s.storageClass(base + 3) == .integer && s.storageClass(base + 4) == .integer
        for i in 0..<Int32(Self.indexColumns.count) where ![.blob, .null].contains(s.storageClass(4 + i)) { good = false }
        if ![.blob, .null].contains(s.storageClass(base + 2)) { good = false }
        guard good else {
            let id =
                s.storageClass(0) == .null
                ? "?" : s.withBlob(0) { $0.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
            throw KeychainError(
                errSecDecode, "the row of item id \(id) in \(database.path) has a column of a type kc never writes: the keychain was tampered with",
                hint: "restore the keychain from a backup")
        }
    }

    package func insert(_ row: ItemRow) throws -> Int64 {
        let placeholders = Array(repeating: "?", count: 8 + Self.indexColumns.count).joined(separator: ", ")
        let s = try database.statement("INSERT INTO kc_items(\(Self.rowColumns), data, pclass) VALUES (\(placeholders))")
        bind(row, to: s)
        s.bind(Int32(8 + Self.indexColumns.count), Int64(row.protection.rawValue))
        try s.run()
        let seq = database.lastInsertRowID
        try insertPairs(row.pairs, seq: seq)
        return seq
    }

    package func replace(_ row: ItemRow) throws {
        let sets = (["class", "row_version", "pk"] + Self.indexSQL + ["wrapped_key", "metadata", "data", "pclass"])
            .map { "\($0) = ?" }.joined(separator: ", ")
        let s = try database.statement("UPDATE kc_items SET \(sets) WHERE item_id = ? AND seq = ?")
        s.bind(1, row.classCode)
        s.bind(2, Int64(bitPattern: row.rowVersion))
        s.bind(3, row.primaryKey)
        for (i, column) in Self.indexColumns.enumerated() { s.bind(Int32(4 + i), row.indexes[column]) }
        let base = Int32(4 + Self.indexColumns.count)
        s.bind(base, row.wrappedKey)
        s.bind(base + 1, row.metadata)
        s.bind(base + 2, row.data)
        s.bind(base + 3, Int64(row.protection.rawValue))
        s.bind(base + 4, row.itemID)
        s.bind(base + 5, row.seq)
        try s.run()
        guard database.changes == 1 else {
            throw KeychainError(errSecItemNotFound, "the item changed or vanished during the update")
        }
        try deletePairs(seq: row.seq)
        try insertPairs(row.pairs, seq: row.seq)
    }

    package func delete(itemID: [UInt8]) throws {
        let pairs = try database.statement("DELETE FROM kc_pairs WHERE seq = (SELECT seq FROM kc_items WHERE item_id = ?)")
        pairs.bind(1, itemID)
        try pairs.run()
        let s = try database.statement("DELETE FROM kc_items WHERE item_id = ?")
        s.bind(1, itemID)
        try s.run()
    }

    package func changeStamp() throws -> ChangeStamp {
        var values: [Int64] = []
        for file in [database.path, database.path + "-wal"] {
            var st = stat()
            if stat(file, &st) == 0 {
                values += [
                    Int64(st.st_dev), Int64(bitPattern: UInt64(st.st_ino)), Int64(st.st_size),
                    Int64(st.st_ctim.tv_sec), Int64(st.st_ctim.tv_nsec)
                ]
            } else {
                values.append(-1)
            }
        }
        return ChangeStamp(others: try database.dataVersion(), files: values)
    }

    package func forEachIndexEntry(_ index: StoreIndex, _ body: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        // INDEXED BY: SQLite must read the index itself (an error if it cannot), never the table.
        let sql: String
        switch index {
        case .itemID: sql = "SELECT seq, item_id FROM kc_items INDEXED BY sqlite_autoindex_kc_items_1"
        case .primaryKey: sql = "SELECT seq, pk FROM kc_items INDEXED BY sqlite_autoindex_kc_items_2"
        case .column(let c): sql = "SELECT seq, i_\(c.rawValue) FROM kc_items INDEXED BY kc_items_\(c.rawValue) WHERE i_\(c.rawValue) IS NOT NULL"
        // The WITHOUT ROWID table is its primary key's b-tree. NOT INDEXED alone does not
        // keep SQLite (3.40) from answering from the covering kc_pairs_fp; in the primary
        // key's order it reads the table (the plan is pinned by SecretServiceAttributeTests).
        case .pairTable: sql = SQLiteItemStore.pairTableSQL
        case .pairIndex: sql = "SELECT seq, fp FROM kc_pairs INDEXED BY kc_pairs_fp"
        }
        let s = try database.statement(sql)
        defer { s.reset() }
        while try s.step() {
            guard s.storageClass(0) == .integer, s.storageClass(1) == .blob else {
                throw KeychainError(
                    errSecDecode, "an index of \(database.path) holds a value of a type kc never writes: the keychain was tampered with",
                    hint: "restore the keychain from a backup")
            }
            try s.withBlob(1) { try body(s.int(0), $0) }
        }
    }

    package func structuralProblems() throws -> String? {
        try checkSchema()
        return try database.integrityProblems()
    }

    package func compactLog() throws {
        try database.checkpointTruncate()
    }

    package func copy(toNewFile path: String) throws -> any ItemStore {
        do {
            let destination = try Database(path: path)
            try database.copy(into: destination)
            try destination.checkpointTruncate()
        }
        return try SQLiteItemStore(openingExisting: path)
    }

    package func freshConnection() throws -> (any ItemStore)? {
        // The file check without the part that reads the file's magic through a descriptor
        // of its own: closing any descriptor of a file drops every POSIX lock this process
        // holds on it, SQLite's included. The agent's connection then looked like no
        // connection at all: the next process to close the keychain took itself for the
        // last one, checkpointed and unlinked the -shm, and the agent, still mapping the
        // unlinked one, never saw another process's commit again (issue 29, found by its
        // presence tests). The rest (a link, the owner and mode, the -wal and -shm, the
        // folder) is checked again, as at any open; the identity comparison below ties the
        // fresh connection to the file whose magic was checked at the first open.
        try FileSafety.checkKeychainFile(at: database.path, readingIt: false)
        let fresh = try SQLiteItemStore(openingExisting: database.path, checkFile: false)
        return fresh.fileIdentity == fileIdentity ? fresh : nil
    }

    private func bind(_ row: ItemRow, to s: Statement) {
        s.bind(1, row.itemID)
        s.bind(2, row.classCode)
        s.bind(3, Int64(bitPattern: row.rowVersion))
        s.bind(4, row.primaryKey)
        for (i, column) in Self.indexColumns.enumerated() { s.bind(Int32(5 + i), row.indexes[column]) }
        let base = Int32(5 + Self.indexColumns.count)
        s.bind(base, row.wrappedKey)
        s.bind(base + 1, row.metadata)
        s.bind(base + 2, row.data)
    }
}
