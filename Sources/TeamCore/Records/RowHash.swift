import KeychainCore

/// The hash of one stored row of a team keychain: what log entries name and the set hash
/// sums. It covers every column but the data's bytes: the data is sealed under the row's
/// own data key, which the wrapped key covered here authenticates, its associated data
/// binds it to the item, and every write seals under a fresh data key, so data from
/// another row or an older version does not open (as `Header.rowDigest` argues for files).
/// Unkeyed: any member and any auditor computes it; no key makes a forgery easier.
package enum RowHash {
    /// BLAKE2b-256("kc team row v1" ‖ lp(id) ‖ u64 version ‖ lp(class) ‖ u64 seq ‖ index
    /// digest ‖ u8 has data ‖ lp(wrapped key) ‖ lp(metadata)).
    package static func of(_ row: ItemRow) -> [UInt8] {
        var w = ByteWriter(capacity: 160 + row.wrappedKey.count + row.metadata.count)
        w.label("kc team row v1")
        w.lengthPrefixed(row.itemID)
        w.u64(row.rowVersion)
        w.lengthPrefixed(Array(row.classCode.utf8))
        w.u64(UInt64(bitPattern: row.seq))
        w.raw(AssociatedData.indexDigest(row))
        w.u8(row.data == nil ? 0 : 1)
        w.lengthPrefixed(row.wrappedKey)
        w.lengthPrefixed(row.metadata)
        return Hashing.blake2b(w.bytes)
    }
}
