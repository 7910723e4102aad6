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

/// The layout check `SQLiteItemStore` makes of a TPM2 slot's fields (`TPM2Slot`).
enum TPM2SlotLayout {
    /// Checks the layout. - Throws: errSecDecode.
    static func check(_ fields: [UInt8]) throws {
        _ = try TPM2Slot(fields: fields)
    }
}
