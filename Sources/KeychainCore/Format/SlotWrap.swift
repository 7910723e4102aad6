/// The key that opens a key slot beyond the password slot, and that slot's wrap of the
/// master key (`docs/format.md` §2.2). The slot's secret (a recovery key's 32 bytes, a
/// TPM's unsealed 32 bytes) has full entropy, so no password hash is needed: the slot key
/// is keyed BLAKE2b-256 under the secret of the slot's identity and a per-slot salt, and
/// the wrap's associated data names the keychain, key generation, slot id, kind and
/// creation time, so a wrap opens in its own slot of its own file only.
enum SlotWrap {
    static let keyLabel = "kc/v6/slot-key"
    static let wrapLabel = "kc/v6/slot-wrap"
    /// Salt length of a slot key.
    static let saltBytes = 16

    /// K_slot = BLAKE2b-256(key = secret, label("kc/v6/slot-key") ‖ label(kind) ‖
    /// lp(keychain_id) ‖ u64 slot_id ‖ lp(salt)).
    static func key(secret: borrowing SecureBytes, kind: KeySlotKind, keychainID: [UInt8], slotID: Int64, salt: [UInt8]) throws -> SymmetricKey {
        var w = ByteWriter(capacity: 96)
        w.label(keyLabel)
        w.label(kind.label)
        w.lengthPrefixed(keychainID)
        w.u64(UInt64(bitPattern: slotID))
        w.lengthPrefixed(salt)
        let message = w.bytes
        var derived = secret.withUnsafeBytes { Hashing.blake2b(message, key: $0, length: 32) }
        defer { Sodium.wipe(&derived) }
        return SymmetricKey(try SecureBytes(copying: derived, guarded: true))
    }

    /// The wrap's associated data: label("kc/v6/slot-wrap") ‖ label(kind) ‖ lp(keychain_id)
    /// ‖ u32 key_generation ‖ u64 slot_id ‖ u64 created ‖ lp(salt).
    static func associatedData(kind: KeySlotKind, keychainID: [UInt8], keyGeneration: UInt32, slotID: Int64, created: UInt64, salt: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.label(wrapLabel)
        w.label(kind.label)
        w.lengthPrefixed(keychainID)
        w.u32(keyGeneration)
        w.u64(UInt64(bitPattern: slotID))
        w.u64(created)
        w.lengthPrefixed(salt)
        return w.bytes
    }
}
