import KeychainCore
import Synchronization

/// The pieces a scan of every row is cut into, which the connections that scan in
/// parallel claim in turn (`claim`), so that each does as much as it has time for (the
/// first open's own connection first walks the log): ranges of `seq` of about
/// `rowsPerPiece` rows, and last the rest, the rows whose `seq` is NULL or outside the
/// range, so that no row escapes the scan (the row decoding then refuses a NULL seq).
/// Without a range (no rows, or a scan that is not split) one piece holds every row.
///
///     let pieces = ScanPieces(range: try store.seqRange())
///     try store.forEachRowUnordered(claiming: pieces) { row in … }
package final class ScanPieces: Sendable {
    /// A piece: the condition after `keychain_id = $1`, and its parameters ($2, $3).
    package struct Piece: Sendable {
        /// SQL appended to `WHERE keychain_id = $1`: no value in it, only placeholders.
        let condition: String
        /// The values of `$2` and `$3`, if the condition has them.
        let params: [PGValue?]
    }

    /// The `seq` range split, nil for one piece of every row.
    private let range: ClosedRange<Int64>?
    /// The number of ranges (the rest comes after them).
    private let ranges: Int
    /// The `seq` span of one range.
    private let step: Int64
    /// The next piece to hand out.
    private let next = Atomic<Int>(0)

    /// The pieces of `range`, each of about `rowsPerPiece` values of `seq` (at most 64).
    /// A range wider than 2^40 (which no keychain's rows fill: a server's hint gone wild)
    /// is not split.
    package init(range: ClosedRange<Int64>?, rowsPerPiece: Int = 4_096) {
        let span = range.map { UInt64(bitPattern: $0.upperBound &- $0.lowerBound) &+ 1 } ?? 0
        guard let range, span > 0, span <= 1 << 40 else {
            self.range = nil
            ranges = 0
            step = 1
            return
        }
        self.range = range
        let count = Int(min(max(span / UInt64(max(rowsPerPiece, 1)), 1), 64))
        ranges = count
        step = Int64(clamping: (span + UInt64(count) - 1) / UInt64(count))
    }

    /// The number of pieces.
    package var count: Int { range == nil ? 1 : ranges + 1 }

    /// The next piece nobody claimed; nil when all are.
    package func claim() -> Piece? {
        let i = next.add(1, ordering: .relaxed).oldValue
        guard i < count else { return nil }
        guard let range else { return Piece(condition: "", params: []) }
        if i == ranges {
            return Piece(condition: " AND (seq IS NULL OR seq < $2 OR seq > $3)", params: [.int64(range.lowerBound), .int64(range.upperBound)])
        }
        // Contiguous ranges from the lowest seq; the last ends at the highest. One that
        // would start past it is empty.
        let (low, overflow) = range.lowerBound.addingReportingOverflow(Int64(i) * step)
        guard !overflow, low <= range.upperBound else { return Piece(condition: " AND false", params: []) }
        let (end, past) = low.addingReportingOverflow(step - 1)
        let high = i == ranges - 1 || past ? range.upperBound : min(range.upperBound, end)
        return Piece(condition: " AND seq >= $2 AND seq <= $3", params: [.int64(low), .int64(high)])
    }
}
