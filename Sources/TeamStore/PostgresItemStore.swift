import KeychainCore

/// `ItemStore` on the PostgreSQL tables of one team keychain (`kc_items`, `kc_pairs`),
/// with the semantics of `SQLiteItemStore` (the conformance tests run both): rows in
/// `seq` order, pairs read back sorted by bytes, a duplicate primary key is
/// errSecDuplicateItem. Every statement filters on the keychain's id. The header of a
/// team keychain is its signed log (`TeamTables`), not a record here.
package final class PostgresItemStore: ItemStore {
    /// The connection every statement goes through.
    package let connection: PostgresConnection
    /// The team keychain's id (BLAKE2b-256 of its genesis record).
    package let keychainID: [UInt8]
    /// What messages call the keychain: "team:NAME".
    package let label: String

    /// The blind-index columns, `i_<rawValue>` in `IndexColumn.allCases` order.
    private static let indexSQL = IndexColumn.allCases.map { "i_\($0.rawValue)" }
    /// The columns `itemRow` reads, in its order (then each lookup's data and pairs).
    static let itemColumnsSQL = "seq, item_id, class, row_version, pk, " + indexSQL.joined(separator: ", ") + ", wrapped_key, metadata, pclass"
    /// The columns of `forEachRow`, data last but one and the pairs (length-prefixed,
    /// sorted by bytes) last.
    private static func columns(includeData: Bool) -> String {
        itemColumnsSQL + ", "
            + (includeData ? "data" : "CASE WHEN data IS NULL THEN NULL ELSE ''::bytea END")
            + ", (SELECT string_agg(int4send(length(p.fp)) || p.fp, ''::bytea ORDER BY p.fp) FROM kc_pairs p"
            + " WHERE p.keychain_id = kc_items.keychain_id AND p.item_id = kc_items.item_id)"
    }

    /// A store over `connection` for the keychain `keychainID`, named `label` in messages.
    package init(connection: PostgresConnection, keychainID: [UInt8], label: String) {
        self.connection = connection
        self.keychainID = keychainID
        self.label = label
    }

    // MARK: - Transactions

    package func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T {
        // Nested calls run inside the open transaction (a write inside a read-only
        // snapshot cannot: the caller's mistake, said as such).
        if connection.inTransaction {
            if write && nestedReadOnly {
                throw KeychainError(errSecInternalError, "a write was started inside a read-only transaction of \(label)")
            }
            return try body()
        }
        do {
            return try outermostTransaction(write: write, body)
        } catch is PostgresConnection.SessionStateLost {
            // A pool lost a prepared statement under the transaction, which it aborted:
            // the connection prepares no more statements, and the transaction runs again.
            return try outermostTransaction(write: write, body)
        }
    }

    /// `transaction` when none is open: BEGIN, `body`, COMMIT (ROLLBACK when it throws).
    private func outermostTransaction<T>(write: Bool, _ body: () throws -> T) throws -> T {
        // A connection the server dropped (a restart, an idle timeout) is found out by the
        // first statement: BEGIN changes nothing, so it is safe to connect again and repeat.
        do {
            if connection.isBroken { try connection.reconnect() }
            try connection.begin(readOnlySnapshot: !write)
        } catch let e as KeychainError where e.status == errSecNotAvailable && connection.isBroken && !connection.timedOut {
            // (Not after a deadline passed: the server is stalled, and would be waited for again.)
            try connection.reconnect()
            try connection.begin(readOnlySnapshot: !write)
        }
        nestedReadOnly = !write
        do {
            let result = try body()
            try connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Whether the transaction this store opened is a read-only snapshot.
    private var nestedReadOnly = false

    package func withBulkCache<T>(_ body: () throws -> T) throws -> T { try body() }

    // MARK: - The header lives in the log

    /// What the header methods throw: a team keychain keeps no header records here.
    private func headerIsTheLog() -> KeychainError {
        KeychainError(errSecUnimplemented, "a team keychain's header is its signed log")
    }

    package func readKeychainRecord() throws -> KeychainRecord { throw headerIsTheLog() }
    package func writeKeychainRecord(_ record: KeychainRecord) throws { throw headerIsTheLog() }
    package func readState() throws -> StateRecord { throw headerIsTheLog() }
    package func writeState(_ state: StateRecord) throws { throw headerIsTheLog() }

    // MARK: - Rows

    /// Set by the team authority for one read outside a transaction: each lookup then
    /// reads the keychain's head in the same statement (one snapshot of the head and the
    /// rows, no BEGIN or COMMIT) and hands it here before any of its rows; nil when the
    /// keychain row is gone. Inside a transaction lookups read the rows alone.
    package var headObserver: ((TeamHead?) throws -> Void)?

    /// The columns of the head a headed lookup reads first, in `TeamTables.decodeHead`'s order.
    private static let headColumnCount = 5

    package func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {
        // Which rows: the condition (on kc_items, $1 the keychain id) and its parameters.
        var params: [PGValue?] = [.bytes(keychainID)]
        let condition: String
        switch lookup {
        case .itemID(let itemID):
            params.append(.bytes(itemID))
            condition = "kc_items.keychain_id = $1 AND kc_items.item_id = $2"
        // Fingerprints are keyed per class: no filter on the class (as SQLiteItemStore).
        case .primaryKey(let pk):
            params.append(.bytes(pk))
            condition = "kc_items.keychain_id = $1 AND kc_items.pk = $2"
        case .indexes(let conditions):
            var clauses = ["kc_items.keychain_id = $1"]
            for (column, value) in conditions {
                params.append(.bytes(value))
                clauses.append("kc_items.i_\(column.rawValue) = $\(params.count)")
            }
            condition = clauses.joined(separator: " AND ")
        case .pairs(let fingerprints, let conditions):
            // No fingerprint matches nothing (SQLite's pair lookup has no driving pair then).
            guard !fingerprints.isEmpty else { return }
            var clauses = ["kc_items.keychain_id = $1"]
            for fp in fingerprints {
                params.append(.bytes(fp))
                clauses.append("EXISTS (SELECT 1 FROM kc_pairs p WHERE p.keychain_id = $1 AND p.item_id = kc_items.item_id AND p.fp = $\(params.count))")
            }
            for (column, value) in conditions {
                params.append(.bytes(value))
                clauses.append("kc_items.i_\(column.rawValue) = $\(params.count)")
            }
            condition = clauses.joined(separator: " AND ")
        case .scan(let classCode):
            params.append(.text(classCode))
            condition = "kc_items.keychain_id = $1 AND kc_items.class = $2"
        case .all:
            condition = "kc_items.keychain_id = $1"
        }
        let columns = Self.columns(includeData: includeData)
        if let observer = headObserver, !connection.inTransaction {
            // The head and the rows in one statement: a row always comes back (the head),
            // with NULL item columns when nothing matched.
            let sql =
                "WITH h AS (SELECT \(TeamTables.headColumns) FROM kc_keychains WHERE keychain_id = $1)"
                + " SELECT h.*, \(columns) FROM h LEFT JOIN kc_items ON \(condition) ORDER BY kc_items.seq"
            let result = try outsideTransaction { try connection.executePrepared(sql, params) }
            try observer(try TeamTables.decodeHead(result))
            for r in 0..<result.rowCount where !result.isNull(r, Self.headColumnCount) {
                guard try body(try row(result, r, at: Self.headColumnCount, includeData: includeData)) else { break }
            }
            return
        }
        let result = try connection.executePrepared("SELECT \(columns) FROM kc_items WHERE \(condition) ORDER BY seq", params)
        for r in 0..<result.rowCount {
            guard try body(try row(result, r, at: 0, includeData: includeData)) else { break }
        }
    }

    /// Runs one statement outside a transaction, connecting again first when the server
    /// dropped the connection (a restart, an idle timeout), and once more when the statement
    /// finds it dropped: a lookup changes nothing, so it is safe to repeat.
    private func outsideTransaction(_ statement: () throws -> PGResult) throws -> PGResult {
        if connection.isBroken { try connection.reconnect() }
        do {
            return try statement()
        } catch let e as KeychainError where e.status == errSecNotAvailable && connection.isBroken && !connection.timedOut {
            // (Not after a deadline passed: the server is stalled, and would be waited for again.)
            try connection.reconnect()
            return try statement()
        }
    }

    /// Row `r` of a `forEachRow` answer, whose item columns start at column `first`.
    /// - Throws: errSecDecode for a value kc never writes (as SQLiteItemStore).
    private func row(_ result: PGResult, _ r: Int, at first: Int, includeData: Bool) throws -> ItemRow {
        let base = first + 5 + IndexColumn.allCases.count
        let data = result.bytes(r, base + 3)
        // Sealed data is never empty (nonce and tag alone are 40 bytes).
        if includeData, let data, data.isEmpty {
            throw KeychainError(errSecDecode, "a row of \(label) has an empty data column: the keychain is damaged or was tampered with")
        }
        return try itemRow(result, r, at: first, pairs: try Self.pairs(result.bytes(r, base + 4) ?? [], label: label), data: data)
    }

    /// The row whose columns start at `first` in row `r` of `cells`, in the order both
    /// `forEachRow` and the scan select them (seq, item_id, class, row_version, pk, the
    /// index columns, wrapped_key, metadata, pclass), with its `pairs` and `data`, which
    /// each reads its own way.
    /// - Throws: errSecDecode for a value kc never writes (as SQLiteItemStore).
    func itemRow(_ cells: some PGCells, _ r: Int, at first: Int, pairs: [[UInt8]], data: [UInt8]?) throws -> ItemRow {
        var indexes = [IndexColumn: [UInt8]](minimumCapacity: IndexColumn.allCases.count)
        for (i, column) in IndexColumn.allCases.enumerated() {
            if let v = cells.bytes(r, first + 5 + i) { indexes[column] = v }
        }
        let base = first + 5 + IndexColumn.allCases.count
        guard let seq = cells.int64(r, first), let itemID = cells.bytes(r, first + 1), let classCode = cells.text(r, first + 2),
            let version = cells.int64(r, first + 3).flatMap({ UInt64(exactly: $0) }), let pk = cells.bytes(r, first + 4),
            let wrapped = cells.bytes(r, base), let meta = cells.bytes(r, base + 1), let pclass = cells.int64(r, base + 2)
        else {
            throw KeychainError(errSecDecode, "a row of \(label) is malformed: the keychain is damaged or was tampered with")
        }
        guard let protection = UInt8(exactly: pclass).flatMap(ProtectionClass.init(rawValue:)) else {
            throw KeychainError(errSecDecode, "a row of \(label) has an unknown protection class: the keychain was tampered with")
        }
        return ItemRow(
            seq: seq, itemID: itemID, classCode: classCode, rowVersion: version, primaryKey: pk, indexes: indexes,
            pairs: pairs, wrappedKey: wrapped, metadata: meta, data: data, protection: protection)
    }

    /// The fingerprints of a row's pair column: (u32 big-endian length, bytes)…
    private static func pairs(_ packed: [UInt8], label: String) throws -> [[UInt8]] {
        var out: [[UInt8]] = [], i = 0
        while i < packed.count {
            guard i + 4 <= packed.count else { throw malformedPairs(label) }
            let n = packed[i..<(i + 4)].reduce(0) { ($0 << 8) | Int($1) }
            i += 4
            guard n >= 0, i + n <= packed.count else { throw malformedPairs(label) }
            out.append(Array(packed[i..<(i + n)]))
            i += n
        }
        return out
    }

    /// The error for a pair column that is not a run of (length, bytes).
    private static func malformedPairs(_ label: String) -> KeychainError {
        KeychainError(errSecDecode, "the Secret Service pairs of a row of \(label) are malformed")
    }

    /// The parameters of a row's columns after keychain_id, in the order of `rowColumnsSQL`.
    private func values(_ row: ItemRow) throws -> [PGValue?] {
        guard let version = Int64(exactly: row.rowVersion) else {
            throw KeychainError(errSecParam, "row version \(row.rowVersion) is out of range")
        }
        return [.bytes(row.itemID), .text(row.classCode), .int64(version), .bytes(row.primaryKey)]
            + IndexColumn.allCases.map { c in row.indexes[c].map { .bytes($0) } }
            + [.bytes(row.wrappedKey), .bytes(row.metadata), row.data.map { .bytes($0) }, .int64(Int64(row.protection.rawValue))]
    }

    /// The columns `values(_:)` fills, in its order.
    private static let rowColumnsSQL = "item_id, class, row_version, pk, " + indexSQL.joined(separator: ", ") + ", wrapped_key, metadata, data, pclass"

    package func insert(_ row: ItemRow) throws -> Int64 {
        let params = [PGValue.bytes(keychainID)] + (try values(row))
        let placeholders = (1...params.count).map { "$\($0)" }.joined(separator: ", ")
        // ON CONFLICT DO NOTHING: a duplicate is an answer, not an error that would abort
        // the caller's transaction (SQLite's transaction survives one).
        let result = try connection.executePrepared(
            "INSERT INTO kc_items (keychain_id, \(Self.rowColumnsSQL)) VALUES (\(placeholders)) ON CONFLICT DO NOTHING RETURNING seq", params)
        guard result.rowCount == 1 else {
            throw KeychainError(errSecDuplicateItem, "the item already exists in \(label)")
        }
        guard let seq = result.int64(0, 0) else { throw PGResult.malformed("no seq for a new row") }
        try insertPairs(row.pairs, itemID: row.itemID)
        return seq
    }

    package func replace(_ row: ItemRow) throws {
        var params: [PGValue?] = [.bytes(keychainID)] + (try values(row)) + [.int64(row.seq)]
        let columns = (["class", "row_version", "pk"] + Self.indexSQL + ["wrapped_key", "metadata", "data", "pclass"])
        let sets = columns.enumerated().map { "\($0.element) = $\($0.offset + 3)" }.joined(separator: ", ")
        // A primary key another row holds is refused before the UPDATE, so that the unique
        // constraint (whose error would abort the transaction) is the guard of last resort.
        let seqParam = params.count
        let sql =
            "UPDATE kc_items SET \(sets) WHERE keychain_id = $1 AND item_id = $2 AND seq = $\(seqParam)"
            + " AND NOT EXISTS (SELECT 1 FROM kc_items o WHERE o.keychain_id = $1 AND o.pk = $5 AND o.item_id <> $2)"
        let result = try connection.executePrepared(sql, params)
        if result.affectedRows != 1 {
            let taken = try connection.execute(
                "SELECT 1 FROM kc_items WHERE keychain_id = $1 AND pk = $2 AND item_id <> $3",
                [.bytes(keychainID), .bytes(row.primaryKey), .bytes(row.itemID)])
            if taken.rowCount > 0 { throw KeychainError(errSecDuplicateItem, "the item already exists in \(label)") }
            throw KeychainError(errSecItemNotFound, "the item changed or vanished during the update")
        }
        params.removeAll()
        try connection.execute("DELETE FROM kc_pairs WHERE keychain_id = $1 AND item_id = $2", [.bytes(keychainID), .bytes(row.itemID)])
        try insertPairs(row.pairs, itemID: row.itemID)
    }

    /// Writes the pair rows of the item `itemID`, in one statement.
    private func insertPairs(_ pairs: [[UInt8]], itemID: [UInt8]) throws {
        guard !pairs.isEmpty else { return }
        var params: [PGValue?] = [.bytes(keychainID), .bytes(itemID)]
        var tuples: [String] = []
        for fp in pairs {
            params.append(.bytes(fp))
            tuples.append("($1, $\(params.count), $2)")
        }
        try connection.execute("INSERT INTO kc_pairs (keychain_id, fp, item_id) VALUES " + tuples.joined(separator: ", "), params)
    }

    package func delete(itemID: [UInt8]) throws {
        try connection.execute("DELETE FROM kc_pairs WHERE keychain_id = $1 AND item_id = $2", [.bytes(keychainID), .bytes(itemID)])
        try connection.execute("DELETE FROM kc_items WHERE keychain_id = $1 AND item_id = $2", [.bytes(keychainID), .bytes(itemID)])
    }

    // MARK: - Change and integrity

    /// The keychain's generation: it moves with every committed write (this connection's
    /// own included), -1 when the keychain row is gone.
    package func changeStamp() throws -> ChangeStamp {
        let r = try connection.executePrepared("SELECT generation FROM kc_keychains WHERE keychain_id = $1", [.bytes(keychainID)])
        return ChangeStamp(others: r.int64(0, 0) ?? -1, files: [])
    }

    package func isStillTheOpenedFile() -> Bool { true }

    package func forEachIndexEntry(_ index: StoreIndex, _ body: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        let sql: String
        switch index {
        case .itemID: sql = "SELECT seq, item_id FROM kc_items WHERE keychain_id = $1 ORDER BY item_id"
        case .primaryKey: sql = "SELECT seq, pk FROM kc_items WHERE keychain_id = $1 ORDER BY pk"
        case .column(let c):
            sql = "SELECT seq, i_\(c.rawValue) FROM kc_items WHERE keychain_id = $1 AND i_\(c.rawValue) IS NOT NULL ORDER BY i_\(c.rawValue), seq"
        case .pairTable:
            sql =
                "SELECT i.seq, p.fp FROM kc_pairs p JOIN kc_items i ON i.keychain_id = p.keychain_id AND i.item_id = p.item_id WHERE p.keychain_id = $1 ORDER BY i.seq, p.fp"
        case .pairIndex:
            sql =
                "SELECT i.seq, p.fp FROM kc_pairs p JOIN kc_items i ON i.keychain_id = p.keychain_id AND i.item_id = p.item_id WHERE p.keychain_id = $1 ORDER BY p.fp, i.seq"
        }
        let result = try connection.execute(sql, [.bytes(keychainID)])
        for r in 0..<result.rowCount {
            guard let seq = result.int64(r, 0), let value = result.bytes(r, 1) else {
                throw KeychainError(errSecDecode, "an index of \(label) holds a value of a type kc never writes")
            }
            try value.withUnsafeBytes { try body(seq, $0) }
        }
    }

    package func structuralProblems() throws -> String? {
        do {
            try PostgresSchema.check(connection)
            return nil
        } catch let e as KeychainError where e.status == errSecDecode || e.status == errSecWrongSecVersion {
            return e.message
        }
    }

    package func compactLog() throws {}

    package func copy(toNewFile path: String) throws -> any ItemStore {
        throw KeychainError(
            errSecUnimplemented, "\(label) cannot be copied into a file",
            hint: "back up a team keychain with pg_dump; docs/team.md")
    }

    package func freshConnection() throws -> (any ItemStore)? {
        PostgresItemStore(connection: try PostgresConnection(like: connection), keychainID: keychainID, label: label)
    }
}
