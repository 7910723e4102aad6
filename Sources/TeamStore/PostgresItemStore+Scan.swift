import KeychainCore

/// The scan of every row that a first open (and `kc team verify`) checks against the signed
/// set hash, shaped for that one job (`docs/performance.md`, "Team keychains"):
/// - the pairs come from a second statement, one ordered read of `kc_pairs`, merged here by
///   item id, instead of a correlated aggregate per row: that subquery cost about 3 µs a
///   row, and its cost estimate made PostgreSQL JIT-compile the statement, about 0.5 s of
///   LLVM at 100,000 rows;
/// - JIT is off for the transaction (`SET LOCAL jit = off`): for a statement that reads
///   every row and computes nothing it only adds compile time;
/// - the rows come in pieces (`ScanPieces`: ranges of `seq`) that two connections in one
///   snapshot claim in turn, each piece asked for before the last one is hashed; rows come
///   in no particular order (the set hash and the ledger have none);
/// - values are read in place from libpq's answer (`PGRows`), not copied twice.
///
/// The rows are the ones `forEachRow(.all, includeData: false)` reads, value for value
/// (the data column only says whether there is data: empty when there is, nil when not),
/// so `RowHash.of` hashes them the same; the tests compare the two.
extension PostgresItemStore {
    /// The lowest and highest `seq` of the keychain's rows; nil when it has none.
    package func seqRange() throws -> ClosedRange<Int64>? {
        let r = try connection.execute("SELECT min(seq), max(seq) FROM kc_items WHERE keychain_id = $1", [.bytes(keychainID)])
        guard let low = r.int64(0, 0), let high = r.int64(0, 1), low <= high else { return nil }
        return low...high
    }

    /// Calls `body` with every row of the keychain in the pieces of `pieces` this
    /// connection claims, without its data, in no set order; another connection in the same
    /// snapshot may claim the others. It must run inside a transaction
    /// (`transaction(write:_:)`), whose snapshot it reads.
    /// - Returns: how many pieces this connection claimed.
    /// - Throws: errSecDecode for a malformed row (as `forEachRow`); `body`'s error.
    @discardableResult
    package func forEachRowUnordered(claiming pieces: ScanPieces, _ body: (ItemRow) throws -> Void) throws -> Int {
        guard connection.inTransaction else {
            throw KeychainError(errSecInternalError, "the scan of \(label) runs outside a transaction")
        }
        try connection.execute("SET LOCAL jit = off")
        let id = PGValue.bytes(keychainID)
        // The pairs, by item id, each item's sorted by bytes (as `forEachRow`'s aggregate).
        var pairs: [[UInt8]: [[UInt8]]] = [:]
        let p = try connection.executeRows("SELECT item_id, fp FROM kc_pairs WHERE keychain_id = $1 ORDER BY item_id, fp", [id])
        for r in 0..<p.rowCount {
            guard let item = p.bytes(r, 0), let fp = p.bytes(r, 1) else {
                throw KeychainError(errSecDecode, "the Secret Service pairs of a row of \(label) are malformed")
            }
            pairs[item, default: []].append(fp)
        }
        let select = "SELECT \(Self.itemColumnsSQL), data IS NOT NULL FROM kc_items WHERE keychain_id = $1"
        guard let first = pieces.claim() else { return 0 }
        var claimed = 1
        // The next piece is asked for before this one is hashed, so that the server reads
        // it meanwhile.
        try connection.sendRowsQuery(select + first.condition, [id] + first.params)
        defer { connection.discardRows() }
        while true {
            let rows = try connection.receiveRows()
            let next = pieces.claim()
            if let next {
                try connection.sendRowsQuery(select + next.condition, [id] + next.params)
                claimed += 1
            }
            for r in 0..<rows.rowCount {
                try body(try scannedRow(rows, r, pairs: pairs))
            }
            if next == nil { break }
        }
        return claimed
    }

    /// Row `r` of a scan's answer, with its pairs from `pairs`.
    /// - Throws: errSecDecode for a value kc never writes (as `forEachRow`).
    private func scannedRow(_ rows: PGRows, _ r: Int, pairs: [[UInt8]: [[UInt8]]]) throws -> ItemRow {
        guard let itemID = rows.bytes(r, 1), let hasData = rows.bool(r, 5 + IndexColumn.allCases.count + 3) else {
            throw KeychainError(errSecDecode, "a row of \(label) is malformed: the keychain is damaged or was tampered with")
        }
        return try itemRow(rows, r, at: 0, pairs: pairs[itemID] ?? [], data: hasData ? [] : nil)
    }
}
