/// The associated data of every ciphertext (`docs/format.md` §3): one fixed,
/// length-unambiguous layout, so that a ciphertext decrypts only in its own place.
package enum AssociatedData {
    static let masterKeyLabel = "kc/v1/mk-wrap"
    static let dataKeyLabel = "kc/v1/dek"
    static let metadataLabel = "kc/v1/meta"
    static let dataLabel = "kc/v1/data"
    /// The header MAC of formats 1–4 (`Header.macV1`): the password record not covered.
    static let headerLabelV1 = "kc/v1/header"
    /// The header MAC of format 5 (`Header.mac`): the whole password record covered.
    static let headerLabel = "kc/v5/header"
    /// The password record inside format 5's header MAC (`KeychainRecord.authenticatedBytes`).
    static let recordLabel = "kc/v5/record"
    /// Format 2's accumulator term covers every column (`Header.term`); format 1's did not.
    static let accumulatorLabel = "kc/v2/acc"
    static let accumulatorLabelV1 = "kc/v1/acc"
    /// The in-memory digest of a verified row (`Header.rowDigest`); never stored.
    static let rowDigestLabel = "kc/v2/row"
    /// The key of the index fold (`IndexFold`); never stored.
    static let indexFoldLabel = "kc/v2/index-fold"
    /// What precedes the protection class in an index digest (format 4, §3.2).
    static let protectionMarker: UInt32 = 0xFFFF_FFFF

    /// The master-key wrap: label ‖ format ‖ keychain id ‖ key generation ‖ KDF algorithm,
    /// opslimit, memlimit, salt.
    static func masterKeyWrap(_ r: KeychainRecord) -> [UInt8] {
        var w = ByteWriter()
        w.label(masterKeyLabel)
        w.u32(r.formatVersion)
        w.lengthPrefixed(r.keychainID)
        w.u32(r.keyGeneration)
        w.u32(r.kdfAlgorithm)
        w.u64(r.kdfOpslimit)
        w.u64(r.kdfMemlimit)
        w.lengthPrefixed(r.kdfSalt)
        return w.bytes
    }

    /// The wrapped data key and the metadata: label ‖ keychain id ‖ key generation ‖ item
    /// id ‖ class ‖ row version ‖ has-data byte ‖ BLAKE2b-256 of the row's index columns.
    static func rowBinding(label: String, keys: KeyHierarchy, row: ItemRow) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.label(label)
        w.lengthPrefixed(keys.keychainID)
        w.u32(keys.keyGeneration)
        w.lengthPrefixed(row.itemID)
        w.lengthPrefixed(Array(row.classCode.utf8))
        w.u64(row.rowVersion)
        // Whether the row has data: nulling the data column must not pass for "no data".
        w.u8(row.data == nil ? 0 : 1)
        w.raw(indexDigest(row))
        return w.bytes
    }

    /// The data: label ‖ keychain id ‖ item id ‖ class. Bound to its row through its data
    /// key, so a re-key re-wraps data keys without touching any secret's ciphertext.
    static func data(keychainID: [UInt8], itemID: [UInt8], classCode: String) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.label(dataLabel)
        w.lengthPrefixed(keychainID)
        w.lengthPrefixed(itemID)
        w.lengthPrefixed(Array(classCode.utf8))
        return w.bytes
    }

    /// BLAKE2b-256 over the primary-key fingerprint and every index column in schema
    /// order, each as presence byte ‖ length ‖ bytes, then, only for a row with Secret
    /// Service pairs (format 3), u32 count ‖ each pair fingerprint (lp) in byte order: a row
    /// without pairs keeps its format-2 digest, and so its associated data and accumulator term;
    /// then, only for a row not protected by the when-unlocked class (format 4), u32
    /// 0xFFFFFFFF ‖ u8 protection class.
    package static func indexDigest(_ row: ItemRow) -> [UInt8] {
        var w = ByteWriter(capacity: 256 + 20 * row.pairs.count)
        w.lengthPrefixed(row.primaryKey)
        for column in IndexColumn.allCases {
            if let v = row.indexes[column] {
                w.u8(1)
                w.lengthPrefixed(v)
            } else {
                w.u8(0)
            }
        }
        if !row.pairs.isEmpty {
            w.u32(UInt32(row.pairs.count))
            for pair in row.pairs { w.lengthPrefixed(pair) }
        }
        // Format 4: a row of any class but when-unlocked ends in a marker no pair count can
        // be (at most 64 pairs) and its class, so editing the `pclass` column fails the row's
        // associated data and accumulator term; a when-unlocked row keeps its format-3 digest.
        if row.protection != .whenUnlocked {
            w.u32(protectionMarker)
            w.u8(row.protection.rawValue)
        }
        return Hashing.blake2b(w.bytes, length: 32)
    }
}
