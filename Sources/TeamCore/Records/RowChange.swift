import KeychainCore

/// One row a log entry changes: the item, its class, its row version before and after, and
/// the hash of the stored row before and after (`RowHash`; empty when the row did not exist
/// before, or no longer exists after). Readers apply these to their view and to the set hash.
package struct RowChange: Equatable, Sendable {
    /// The item's 16-byte id.
    package var itemID: [UInt8]
    /// Its class's four-letter code.
    package var classCode: String
    /// The row version before (0 for a new item) and after (0 for a deleted one).
    package var oldVersion: UInt64, newVersion: UInt64
    /// The row's hash before and after; empty for none.
    package var oldHash: [UInt8], newHash: [UInt8]

    /// A change of these values.
    package init(itemID: [UInt8], classCode: String, oldVersion: UInt64, newVersion: UInt64, oldHash: [UInt8], newHash: [UInt8]) {
        self.itemID = itemID
        self.classCode = classCode
        self.oldVersion = oldVersion
        self.newVersion = newVersion
        self.oldHash = oldHash
        self.newHash = newHash
    }

    func encode(into w: inout ByteWriter) {
        w.lengthPrefixed(itemID)
        w.lengthPrefixed(Array(classCode.utf8))
        w.u64(oldVersion)
        w.u64(newVersion)
        w.lengthPrefixed(oldHash)
        w.lengthPrefixed(newHash)
    }

    static func decode(from r: inout ByteReader) throws -> RowChange {
        guard let id = r.lengthPrefixed(max: 16), id.count == 16, let cls = r.lengthPrefixed(max: 8),
            let code = String(validating: cls, as: UTF8.self), let old = r.u64(), let new = r.u64(),
            let oldHash = r.lengthPrefixed(max: 32), let newHash = r.lengthPrefixed(max: 32),
            oldHash.isEmpty || oldHash.count == 32, newHash.isEmpty || newHash.count == 32,
            !(oldHash.isEmpty && newHash.isEmpty)
        else {
            throw KeychainError(errSecDecode, "a row change in the team keychain's log is malformed")
        }
        return RowChange(itemID: id, classCode: code, oldVersion: old, newVersion: new, oldHash: oldHash, newHash: newHash)
    }
}
