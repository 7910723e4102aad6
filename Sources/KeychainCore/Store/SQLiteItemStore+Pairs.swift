/// The Secret Service pair index of a SQLite keychain (`kc_pairs`, `docs/format.md` §1, §5,
/// §7): one row (seq, fingerprint) per pair of a generic password's map, written and
/// removed with its item's row, read back as the row's `pairs`.
extension SQLiteItemStore {
    /// A pair lookup counts at most this many entries of each fingerprint to pick the
    /// rarest one to drive the search (SQLite has no statistics: `sqlite_stat1` is refused
    /// by the pinned schema, and would leak more than the index itself).
    static let pairCountLimit = 1024

    /// Every entry of the pair table, read from the table itself. `NOT INDEXED` alone is not
    /// enough for a WITHOUT ROWID table: SQLite 3.40 still answers it from the covering
    /// index `kc_pairs_fp` unless the primary key's order is asked for.
    static let pairTableSQL = "SELECT seq, fp FROM kc_pairs NOT INDEXED ORDER BY seq, fp"
    /// The same from the first entry after a place (a page of a scan): a search of the
    /// table's primary key, never a read of the entries before it.
    static let pairTableAfterSQL = "SELECT seq, fp FROM kc_pairs NOT INDEXED WHERE seq > ? ORDER BY seq, fp"

    /// The fingerprints of the pairs stored for the row at `seq`, in byte order.
    /// - Throws: errSecDecode for an entry of a type kc never writes.
    func pairs(of seq: Int64) throws -> [[UInt8]] {
        let s = try database.statement("SELECT fp FROM kc_pairs WHERE seq = ? ORDER BY fp")
        defer { s.reset() }
        s.bind(1, seq)
        var out: [[UInt8]] = []
        while try s.step() {
            guard s.storageClass(0) == .blob, let fp = s.blob(0) else { throw Self.malformedPair(database.path) }
            out.append(fp)
        }
        return out
    }

    /// Writes the pair rows of the item at `seq`.
    func insertPairs(_ pairs: [[UInt8]], seq: Int64) throws {
        guard !pairs.isEmpty else { return }
        let s = try database.statement("INSERT INTO kc_pairs(seq, fp) VALUES (?, ?)")
        for fp in pairs {
            s.reset()
            s.bind(1, seq)
            s.bind(2, fp)
            try s.run()
        }
    }

    /// Removes the pair rows of the item at `seq`.
    func deletePairs(seq: Int64) throws {
        let s = try database.statement("DELETE FROM kc_pairs WHERE seq = ?")
        s.bind(1, seq)
        try s.run()
    }

    /// The statement of a pair lookup (`RowLookup.pairs`): the rows of the rarest
    /// fingerprint, read from the pair index in seq order, each kept when the pair table
    /// has every other fingerprint for it (a primary-key search) and its index columns
    /// equal the given ones; then the row itself by seq. Never a scan of the items.
    /// - Returns: nil when some fingerprint has no entry at all (nothing can match).
    func pairLookup(columns: String, _ fingerprints: [[UInt8]], _ conditions: [(IndexColumn, [UInt8])], after: Int64 = Int64.min) throws -> Statement? {
        var counted: [(count: Int64, fp: [UInt8])] = []
        let count = try database.statement("SELECT count(*) FROM (SELECT 1 FROM kc_pairs INDEXED BY kc_pairs_fp WHERE fp = ? LIMIT \(Self.pairCountLimit))")
        for fp in fingerprints {
            count.bind(1, fp)
            let n = try count.step() ? count.int(0) : 0
            count.reset()
            if n == 0 { return nil }
            counted.append((n, fp))
        }
        let ordered = counted.sorted { $0.count < $1.count }.map(\.fp)
        let s = try database.statement(Self.pairLookupSQL(columns: columns, pairs: ordered.count, conditions: conditions.map(\.0)))
        for (i, fp) in ordered.enumerated() { s.bind(Int32(i + 1), fp) }
        for (i, condition) in conditions.enumerated() { s.bind(Int32(ordered.count + i + 1), condition.1) }
        s.bind(Int32(ordered.count + conditions.count + 1), after)
        return s
    }

    /// The SQL of a pair lookup: parameters are the fingerprints, the driving one first,
    /// then the index columns' values, then the place to start after (a page's). Its plan is
    /// three searches (`SecretServiceAttributeTests`).
    static func pairLookupSQL(columns: String, pairs: Int, conditions: [IndexColumn]) -> String {
        var sql = "SELECT \(columns) FROM kc_pairs AS d INDEXED BY kc_pairs_fp CROSS JOIN kc_items ON kc_items.seq = d.seq WHERE d.fp = ?"
        for _ in 1..<max(pairs, 1) { sql += " AND EXISTS (SELECT 1 FROM kc_pairs AS p WHERE p.seq = d.seq AND p.fp = ?)" }
        for column in conditions { sql += " AND kc_items.i_\(column.rawValue) = ?" }
        return sql + " AND d.seq > ? ORDER BY d.seq"
    }

    static func malformedPair(_ path: String) -> KeychainError {
        KeychainError(
            errSecDecode, "a Secret Service pair of \(path) is of a type kc never writes: the keychain was tampered with",
            hint: "restore the keychain from a backup")
    }
}

/// The pair table read beside a scan of the items, both in seq order (a merge join): each
/// row's pairs without a search per row. Entries of a seq no row has are passed over here;
/// the integrity scan's fold of the table finds them (`docs/format.md` §6).
struct PairCursor {
    private let statement: Statement
    private let path: String
    private var current: (seq: Int64, fp: [UInt8])?
    private var started = false

    /// A cursor at the start of the pair table, read from the table itself; with `after`,
    /// at the first entry of a later seq (a page of a scan).
    init(_ database: Database, after: Int64? = nil) throws {
        if let after {
            statement = try database.statement(SQLiteItemStore.pairTableAfterSQL)
            statement.bind(1, after)
        } else {
            statement = try database.statement(SQLiteItemStore.pairTableSQL)
        }
        path = database.path
    }

    /// The fingerprints stored for `seq`; calls must come in increasing seq order.
    mutating func pairs(of seq: Int64) throws -> [[UInt8]] {
        if !started {
            started = true
            try advance()
        }
        while let c = current, c.seq < seq { try advance() }
        var out: [[UInt8]] = []
        while let c = current, c.seq == seq {
            out.append(c.fp)
            try advance()
        }
        return out
    }

    private mutating func advance() throws {
        guard try statement.step() else {
            current = nil
            return
        }
        guard statement.storageClass(0) == .integer, statement.storageClass(1) == .blob, let fp = statement.blob(1) else {
            throw SQLiteItemStore.malformedPair(path)
        }
        current = (statement.int(0), fp)
    }

    /// Ends the read.
    func reset() { statement.reset() }
}
