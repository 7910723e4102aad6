/// A keyed fold of index entries (seq, value), one per index (`docs/format.md` §6): the
/// integrity scan folds what the rows say each index should hold, then what each index
/// holds, and the two must agree. An index entry removed, added or pointed elsewhere (a
/// stale index put back with writable_schema, two indexes' root pages swapped, an edited
/// b-tree page) would otherwise hide an item from lookups, or steer a "first match", while
/// every row is intact.
///
/// Each entry counts as SipHash-2-4 under a key derived from K_set, summed modulo 2^64
/// with the number of entries: an attacker without the key cannot build a different set
/// of entries with the same sum.
struct IndexFold: Equatable {
    private var sums: [StoreIndex: UInt64] = [:]
    private var counts: [StoreIndex: Int] = [:]

    /// The fold key for one keychain's keys.
    static func key(_ keys: KeyHierarchy) -> [UInt8] {
        var w = ByteWriter(capacity: 24)
        w.label(AssociatedData.indexFoldLabel)
        return Hashing.mac(w.bytes, key: keys.set, length: 16)
    }

    private static func tag(_ index: StoreIndex) -> UInt8 {
        switch index {
        case .itemID: return 1
        case .primaryKey: return 2
        case .column(let c): return 3 + UInt8(IndexColumn.allCases.firstIndex(of: c) ?? 0)
        case .pairTable: return 32
        case .pairIndex: return 33
        }
    }

    /// Adds one entry of `index`.
    mutating func add(_ index: StoreIndex, seq: Int64, value: UnsafeRawBufferPointer, key: [UInt8]) {
        sums[index, default: 0] &+= Hashing.shortHash(tag: Self.tag(index), number: seq, bytes: value, key: key)
        counts[index, default: 0] += 1
    }

    /// Adds what a row's own columns say every index holds for it.
    mutating func add(row: ItemRow, key: [UInt8]) {
        row.itemID.withUnsafeBytes { add(.itemID, seq: row.seq, value: $0, key: key) }
        row.primaryKey.withUnsafeBytes { add(.primaryKey, seq: row.seq, value: $0, key: key) }
        for (column, value) in row.indexes {
            value.withUnsafeBytes { add(.column(column), seq: row.seq, value: $0, key: key) }
        }
        // Each pair the row reads is one entry of the pair table and one of its index: the
        // table must hold no pair of a row that does not exist, the index none stale.
        for pair in row.pairs {
            pair.withUnsafeBytes {
                add(.pairTable, seq: row.seq, value: $0, key: key)
                add(.pairIndex, seq: row.seq, value: $0, key: key)
            }
        }
    }

    /// The indexes whose folds differ between the two.
    func differences(from other: IndexFold) -> [StoreIndex] {
        StoreIndex.all.filter { sums[$0, default: 0] != other.sums[$0, default: 0] || counts[$0, default: 0] != other.counts[$0, default: 0] }
    }
}
