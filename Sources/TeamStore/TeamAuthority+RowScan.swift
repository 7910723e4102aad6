import KeychainCore
import POSIXSupport
import TeamCore

/// The scan of every row (`docs/design.md`, "The roster lives in the log"; `docs/performance.md`,
/// "First unlock"): a first open reads the rows in pieces of `seq` that two connections
/// claim in turn, this one and a second in the same snapshot (`pg_export_snapshot`) on a
/// thread of its own, and merges the two ledgers and set hashes; a catch-up across a re-key
/// reads them on this connection. What a scan rebuilt is a `ScannedRows`, which only `scan`
/// makes and only `accept` (`TeamAuthority+Ledger.swift`) takes as the view's.
extension TeamAuthority {
    /// The ledger and set hash of every row, as a scan rebuilt them.
    struct ScannedRows: Sendable {
        var ledger: [[UInt8]: [UInt8]]
        var set: LtHash
        /// How many pieces of the scan this connection claimed.
        var pieces = 0

        fileprivate init(ledger: [[UInt8]: [UInt8]], set: LtHash, pieces: Int) {
            self.ledger = ledger
            self.set = set
            self.pieces = pieces
        }
    }

    /// A first open's scan, started before its walk of the log: the pieces both connections
    /// claim, the ledger capacity to reserve, and the second connection's thread (nil when
    /// the snapshot could not be shared or no thread started).
    struct RowScan {
        let pieces: ScanPieces
        let capacity: Int
        let parallel: BackgroundThread<ScannedRows>?
    }

    /// Starts a first open's scan: a second connection in `snapshot` (this transaction's,
    /// nil when the server refused to export it) claims pieces from now on; this one
    /// claims the rest once it has walked the log (`finishScan`).
    func startScan(snapshot: String?) throws -> RowScan {
        let range = try store.seqRange()
        let pieces = ScanPieces(range: range)
        let capacity = range.map(Self.capacity) ?? 0
        let parallel = snapshot.flatMap { startParallelScan($0, pieces: pieces, capacity: capacity) }
        return RowScan(pieces: pieces, capacity: capacity, parallel: parallel)
    }

    /// Scans the pieces this connection claims and merges the second connection's. A scan
    /// the second connection could not make (or one that failed) is made again on this
    /// one, whose error is the answer.
    func finishScan(_ scan: RowScan) throws -> ScannedRows {
        let scanned = try Self.scan(store, pieces: scan.pieces, capacity: scan.capacity)
        guard let parallelScan = scan.parallel else {
            lastScanConnections = 1
            return scanned
        }
        if scanned.pieces == scan.pieces.count {
            // This connection claimed every piece (each is claimed once): the other has
            // none, and may still be waiting for a server connection (a pool of one behind
            // PgBouncer, busy with this transaction). It is not waited for.
            parallelScan.detach()
            lastScanConnections = 1
            return scanned
        }
        guard let other = try? parallelScan.join() else {
            // The pieces the other connection claimed are lost with it: all again here.
            lastScanConnections = 1
            return try Self.scan(store, pieces: ScanPieces(range: nil), capacity: scan.capacity)
        }
        // The smaller into the larger (both reserved the whole range).
        let otherIsLarger = other.ledger.count > scanned.ledger.count
        var larger = otherIsLarger ? other : scanned
        try Self.merge(otherIsLarger ? scanned : other, into: &larger, label: label)
        lastScanConnections = 2
        return larger
    }

    /// Exports this transaction's snapshot (`pg_export_snapshot`) for a second connection;
    /// nil when the server refuses (a standby, a pooler): the rows are then scanned on this
    /// connection. It must be the transaction's first statement: a refusal aborts the
    /// transaction (no savepoint helps: a subtransaction cannot export), which is then
    /// begun again, nothing having been read in it.
    func exportSnapshot() throws -> String? {
        let c = store.connection
        let r: PGResult
        do {
            r = try c.execute("SELECT pg_export_snapshot()")
        } catch let e as KeychainError where e.status != errSecNotAvailable {
            c.rollback()
            try c.begin(readOnlySnapshot: true)
            return nil
        }
        return Self.snapshotName(r.text(0, 0))
    }

    /// The server's answer to `pg_export_snapshot()` when it can be spliced into `SET
    /// TRANSACTION SNAPSHOT '…'` (which takes no parameter, the one value kc does not bind):
    /// 1 to 64 of the characters of PostgreSQL's snapshot names, hex digits and dashes;
    /// nil for anything else (the scan then stays on one connection).
    static func snapshotName(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 64,
            text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) })
        else { return nil }
        return text
    }

    /// Starts a scan of the pieces it claims on a thread with a connection of its own that
    /// reads `snapshot`; nil when no thread starts.
    private func startParallelScan(_ snapshot: String, pieces: ScanPieces, capacity: Int) -> BackgroundThread<ScannedRows>? {
        let dsn = store.connection.dsn, insecure = store.connection.insecureTransport, keychainID = keychainID, label = label
        return try? BackgroundThread {
            let connection = try PostgresConnection(dsn: dsn, insecureTransport: insecure)
            try connection.begin(readOnlySnapshot: true)
            try connection.execute("SET TRANSACTION SNAPSHOT '\(snapshot)'")
            let rows = try Self.scan(PostgresItemStore(connection: connection, keychainID: keychainID, label: label), pieces: pieces, capacity: capacity)
            connection.rollback()
            return rows
        }
    }

    /// The ledger capacity to reserve for the rows of `range` of `seq` (unique per row, so
    /// an upper bound), at most 4 Mi entries (a server's range is a hint, not trusted).
    static func capacity(_ range: ClosedRange<Int64>) -> Int {
        Int(min(UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1, 1 << 22))
    }

    /// Reads the rows of the `pieces` this connection claims (inside `store`'s transaction)
    /// and rebuilds their ledger and set hash. Each row must also be of the key generation
    /// in force (its wrapped key opens later; here only its place and hash are checked).
    /// - Throws: errSecDecode for two rows of one item id or a malformed row.
    static func scan(_ store: PostgresItemStore, pieces: ScanPieces, capacity: Int = 0) throws -> ScannedRows {
        var ledger: [[UInt8]: [UInt8]] = [:]
        ledger.reserveCapacity(capacity)
        var set = LtHash()
        let claimed = try store.forEachRowUnordered(claiming: pieces) { row in
            let h = RowHash.of(row)
            guard ledger.updateValue(h, forKey: row.itemID) == nil else {
                throw tampered(store.label, "two rows have one item id")
            }
            set.add(h)
        }
        return ScannedRows(ledger: ledger, set: set, pieces: claimed)
    }

    /// Adds the rows another connection's scan read to `rows`.
    /// - Throws: errSecDecode when both scans read one item id.
    static func merge(_ other: ScannedRows, into rows: inout ScannedRows, label: String) throws {
        rows.ledger.reserveCapacity(rows.ledger.count + other.ledger.count)
        for (id, h) in other.ledger {
            guard rows.ledger.updateValue(h, forKey: id) == nil else { throw tampered(label, "two rows have one item id") }
        }
        rows.set.add(other.set)
    }

    /// Reads every row, rebuilding the ledger and set hash, and compares them with a signed
    /// entry's.
    func scanRows(keys: KeyHierarchy, expectedDigest: [UInt8], expectedCount: UInt64, at g: UInt64) throws {
        try accept(
            try Self.scan(store, pieces: ScanPieces(range: nil), capacity: ledger.count), expectedDigest: expectedDigest, expectedCount: expectedCount, at: g)
    }
}
