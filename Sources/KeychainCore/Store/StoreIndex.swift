/// One of the store's indexes, for checking it against the rows it indexes
/// (`ItemStore.forEachIndexEntry`, `docs/format.md` §6).
package enum StoreIndex: Hashable, Sendable {
    /// The unique index of item ids.
    case itemID
    /// The unique index of primary-key fingerprints.
    case primaryKey
    /// The index of one blind-index column (its non-NULL values).
    case column(IndexColumn)
    /// The pair table itself (`kc_pairs`, keyed by seq then fingerprint): the pairs each
    /// row reads as its own.
    case pairTable
    /// The index of pair fingerprints (`kc_pairs_fp`), which pair lookups read.
    case pairIndex

    package static let all: [StoreIndex] = [.itemID, .primaryKey] + IndexColumn.allCases.map { .column($0) } + [.pairTable, .pairIndex]
}
