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
    /// The fingerprints of the item's Secret Service pairs, sorted by bytes (`kc_pairs`,
    /// format 3); empty for every item without a map.
    package var pairs: [[UInt8]]
    package var wrappedKey: [UInt8]
    package var metadata: [UInt8]
    /// The sealed data; nil when the item has no data. When a row is read without its data
    /// (`includeData: false`), a non-NULL data column reads as an empty array.
    package var data: [UInt8]?
    /// Which class key protects the row (`pclass`, format 4); when-unlocked for every row of
    /// formats 1–3 but those the migration moved.
    package var protection: ProtectionClass

    /// A record of these values.
    package init(
        seq: Int64 = 0, itemID: [UInt8], classCode: String, rowVersion: UInt64, primaryKey: [UInt8], indexes: [IndexColumn: [UInt8]], pairs: [[UInt8]] = [],
        wrappedKey: [UInt8], metadata: [UInt8], data: [UInt8]?,
        protection: ProtectionClass = .whenUnlocked
    ) {
        self.protection = protection
        self.seq = seq
        self.itemID = itemID
        self.classCode = classCode
        self.rowVersion = rowVersion
        self.primaryKey = primaryKey
        self.indexes = indexes
        self.pairs = pairs
        self.wrappedKey = wrappedKey
        self.metadata = metadata
        self.data = data
    }
}
