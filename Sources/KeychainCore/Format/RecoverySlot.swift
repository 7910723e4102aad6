/// The fields of a recovery slot (`docs/format.md` §2.2): lp(salt) ‖ lp(wrapped_master_key),
/// the master key sealed under `SlotWrap.key` of the recovery key. Nothing of the recovery
/// key itself is stored.
struct RecoverySlot {
    var salt: [UInt8]
    var wrappedMasterKey: [UInt8]

    /// A wrap's length: nonce, the 32-byte master key, tag.
    static let wrapBytes = 24 + 32 + 16

    /// The fields' bytes.
    var fields: [UInt8] {
        var w = ByteWriter(capacity: 8 + salt.count + wrappedMasterKey.count)
        w.lengthPrefixed(salt)
        w.lengthPrefixed(wrappedMasterKey)
        return w.bytes
    }

    /// Parses a recovery slot's fields. - Throws: errSecDecode for any other layout.
    init(fields: [UInt8]) throws {
        var r = ByteReader(fields)
        guard let salt = r.lengthPrefixed(max: 64), salt.count == SlotWrap.saltBytes,
            let wrap = r.lengthPrefixed(max: 256), wrap.count == Self.wrapBytes, r.remaining == 0
        else {
            throw KeychainError(errSecDecode, "a recovery key slot is malformed: the file was tampered with", hint: "restore the keychain from a backup")
        }
        self.salt = salt
        self.wrappedMasterKey = wrap
    }

    init(salt: [UInt8], wrappedMasterKey: [UInt8]) {
        self.salt = salt
        self.wrappedMasterKey = wrappedMasterKey
    }
}

/// The fields of a TPM2 slot, defined now so that the slot comes without another format
/// change (`docs/format.md` §2.2): u16 pcr_bank (a TPM_ALG_ID, 0 when no PCR is bound) ‖
/// u32 pcr_mask (bit i = PCR i) ‖ u8 pin (0 or 1) ‖ lp(sealed TPM2B_PUBLIC) ‖
/// lp(sealed TPM2B_PRIVATE) ‖ lp(salt) ‖ lp(wrapped_master_key). This kc checks the layout
/// (the header MAC covers it like any slot) and lists such a slot, but cannot open it.
enum TPM2SlotLayout {
    /// Checks the layout. - Throws: errSecDecode.
    static func check(_ fields: [UInt8]) throws {
        var r = ByteReader(fields)
        guard r.raw(2) != nil, r.u32() != nil, let pin = r.u8(), pin <= 1,
            let pub = r.lengthPrefixed(max: 4096), !pub.isEmpty,
            let priv = r.lengthPrefixed(max: 4096), !priv.isEmpty,
            let salt = r.lengthPrefixed(max: 64), salt.count == SlotWrap.saltBytes,
            let wrap = r.lengthPrefixed(max: 256), wrap.count == RecoverySlot.wrapBytes, r.remaining == 0
        else {
            throw KeychainError(errSecDecode, "a TPM2 key slot is malformed: the file was tampered with", hint: "restore the keychain from a backup")
        }
    }
}
