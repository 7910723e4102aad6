/// The fixed part of the header: identity, KDF parameters and the wrapped master key
/// (`kc_keychain`, `docs/format.md` §2). Kept in its own table, apart from the counters,
/// so that a counter update never rewrites the page holding the wrap.
struct KeychainRecord: Equatable, Sendable {
    var formatVersion: UInt32
    var keychainID: [UInt8]
    var keyGeneration: UInt32
    var kdfAlgorithm: UInt32
    var kdfOpslimit: UInt64
    var kdfMemlimit: UInt64
    var kdfSalt: [UInt8]
    var wrappedMasterKey: [UInt8]
}

/// The changing part of the header, covered by a MAC under K_header (`kc_state`,
/// `docs/format.md` §6).
struct StateRecord: Equatable, Sendable {
    var minWriterVersion: UInt32
    var generation: UInt64
    var itemCount: UInt64
    var accumulator: [UInt8]
    var idleTimeout: UInt64
    var maxTimeout: UInt64
    var mac: [UInt8]
}

/// One stored item as the store sees it: ids, class, blind indexes and ciphertexts; no
/// plaintext attribute or secret ever reaches this type.
struct ItemRow: Sendable {
    /// The row's place in insertion order (`seq`): what orders "first match" results. It is
    /// assigned by the store on insert (0 before) and covered by the header's accumulator.
    var seq: Int64 = 0
    var itemID: [UInt8]
    var classCode: String
    var rowVersion: UInt64
    var primaryKey: [UInt8]
    var indexes: [IndexColumn: [UInt8]]
    var wrappedKey: [UInt8]
    var metadata: [UInt8]
    /// The sealed data; nil when the item has no data. When a row is read without its data
    /// (`includeData: false`), a non-NULL data column reads as an empty array.
    var data: [UInt8]?
}

/// How the store selects candidate rows (the planner's choice, `docs/format.md` §7).
enum RowLookup: Sendable {
    /// One row by its persistent id.
    case itemID([UInt8])
    /// The row with this primary-key fingerprint (fingerprints are keyed per class).
    case primaryKey([UInt8])
    /// Rows whose index columns all equal the given fingerprints (keyed per class; a
    /// certificate's public-key hash and a key's label share one key, so callers check
    /// the class of what they open).
    case indexes([(IndexColumn, [UInt8])])
    /// Every row of a class.
    case scan(classCode: String)
    /// Every row of every class, read from the table itself (never from an index), for the
    /// integrity scans (`docs/format.md` §6).
    case all
}

/// One of the store's indexes, for checking it against the rows it indexes
/// (`ItemStore.forEachIndexEntry`, `docs/format.md` §6).
enum StoreIndex: Hashable, Sendable {
    /// The unique index of item ids.
    case itemID
    /// The unique index of primary-key fingerprints.
    case primaryKey
    /// The index of one blind-index column (its non-NULL values).
    case column(IndexColumn)

    static let all: [StoreIndex] = [.itemID, .primaryKey] + IndexColumn.allCases.map { .column($0) }
}
