/// A 128-bit digest of one stored row as this process verified it (`Header.rowDigest`).
struct RowDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64
}
