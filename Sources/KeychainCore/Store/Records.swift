/// The fixed part of the header: identity, KDF parameters and the wrapped master key
/// (`kc_keychain`, `docs/format.md` §2). Kept in its own table, apart from the counters,
/// so that a counter update never rewrites the page holding the wrap.
package struct KeychainRecord: Equatable, Sendable {
    package var formatVersion: UInt32
    package var keychainID: [UInt8]
    package var keyGeneration: UInt32
    package var kdfAlgorithm: UInt32
    package var kdfOpslimit: UInt64
    package var kdfMemlimit: UInt64
    package var kdfSalt: [UInt8]
    package var wrappedMasterKey: [UInt8]

    /// A record of these values.
    package init(formatVersion: UInt32, keychainID: [UInt8], keyGeneration: UInt32, kdfAlgorithm: UInt32, kdfOpslimit: UInt64, kdfMemlimit: UInt64, kdfSalt: [UInt8], wrappedMasterKey: [UInt8]) {
        self.formatVersion = formatVersion
        self.keychainID = keychainID
        self.keyGeneration = keyGeneration
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfOpslimit = kdfOpslimit
        self.kdfMemlimit = kdfMemlimit
        self.kdfSalt = kdfSalt
        self.wrappedMasterKey = wrappedMasterKey
    }
}

/// The changing part of the header, covered by a MAC under K_header (`kc_state`,
/// `docs/format.md` §6).
package struct StateRecord: Equatable, Sendable {
    package var minWriterVersion: UInt32
    package var generation: UInt64
    package var itemCount: UInt64
    package var accumulator: [UInt8]
    package var idleTimeout: UInt64
    package var maxTimeout: UInt64
    package var mac: [UInt8]

    /// A record of these values.
    package init(minWriterVersion: UInt32, generation: UInt64, itemCount: UInt64, accumulator: [UInt8], idleTimeout: UInt64, maxTimeout: UInt64, mac: [UInt8]) {
        self.minWriterVersion = minWriterVersion
        self.generation = generation
        self.itemCount = itemCount
        self.accumulator = accumulator
        self.idleTimeout = idleTimeout
        self.maxTimeout = maxTimeout
        self.mac = mac
    }
}

/// One stored item as the store sees it: ids, class, blind indexes and ciphertexts; no
/// plaintext attribute or secret ever reaches this type.
package struct ItemRow: Sendable {
    /// The row's place in insertion order (`seq`): what orders "first match" results. It is
    /// assigned by the store on insert (0 before) and covered by the header's accumulator.
    package var seq: Int64
    package var itemID: [UInt8]
    package var classCode: String
    package var rowVersion: UInt64
    package var primaryKey: [UInt8]
    package var indexes: [IndexColumn: [UInt8]]
    package var wrappedKey: [UInt8]
    package var metadata: [UInt8]
    /// The sealed data; nil when the item has no data. When a row is read without its data
    /// (`includeData: false`), a non-NULL data column reads as an empty array.
    package var data: [UInt8]?

    /// A record of these values.
    package init(seq: Int64 = 0, itemID: [UInt8], classCode: String, rowVersion: UInt64, primaryKey: [UInt8], indexes: [IndexColumn: [UInt8]], wrappedKey: [UInt8], metadata: [UInt8], data: [UInt8]?) {
        self.seq = seq
        self.itemID = itemID
        self.classCode = classCode
        self.rowVersion = rowVersion
        self.primaryKey = primaryKey
        self.indexes = indexes
        self.wrappedKey = wrappedKey
        self.metadata = metadata
        self.data = data
    }
}

/// How the store selects candidate rows (the planner's choice, `docs/format.md` §7).
package enum RowLookup: Sendable {
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
package enum StoreIndex: Hashable, Sendable {
    /// The unique index of item ids.
    case itemID
    /// The unique index of primary-key fingerprints.
    case primaryKey
    /// The index of one blind-index column (its non-NULL values).
    case column(IndexColumn)

    package static let all: [StoreIndex] = [.itemID, .primaryKey] + IndexColumn.allCases.map { .column($0) }
}
