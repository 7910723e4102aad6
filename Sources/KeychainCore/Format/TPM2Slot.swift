/// The fields of a TPM2 slot (`docs/format.md` §2.2): u16 pcr_bank (a TPM_ALG_ID, 0 when no
/// PCR is bound) ‖ u32 pcr_mask (bit i = PCR i) ‖ u8 pin (0 or 1) ‖ lp(sealed TPM2B_PUBLIC) ‖
/// lp(sealed TPM2B_PRIVATE) ‖ lp(salt) ‖ lp(wrapped_master_key): the master key sealed under
/// `SlotWrap.key` of the 32-byte secret the TPM holds sealed. Nothing of the secret itself
/// is stored.
struct TPM2Slot {
    var sealing: TPM2Sealing
    var salt: [UInt8]
    var wrappedMasterKey: [UInt8]

    /// The fields' bytes.
    var fields: [UInt8] {
        var w = ByteWriter(capacity: 24 + sealing.sealedPublic.count + sealing.sealedPrivate.count + salt.count + wrappedMasterKey.count)
        w.raw([UInt8(sealing.pcrBank >> 8), UInt8(sealing.pcrBank & 0xFF)])
        w.u32(sealing.pcrMask)
        w.u8(sealing.hasPIN ? 1 : 0)
        w.lengthPrefixed(sealing.sealedPublic)
        w.lengthPrefixed(sealing.sealedPrivate)
        w.lengthPrefixed(salt)
        w.lengthPrefixed(wrappedMasterKey)
        return w.bytes
    }

    /// Parses a TPM2 slot's fields. - Throws: errSecDecode for any other layout.
    init(fields: [UInt8]) throws {
        var r = ByteReader(fields)
        guard let bank = r.raw(2), let mask = r.u32(), let pin = r.u8(), pin <= 1,
            let pub = r.lengthPrefixed(max: 4096), !pub.isEmpty,
            let priv = r.lengthPrefixed(max: 4096), !priv.isEmpty,
            let salt = r.lengthPrefixed(max: 64), salt.count == SlotWrap.saltBytes,
            let wrap = r.lengthPrefixed(max: 256), wrap.count == RecoverySlot.wrapBytes, r.remaining == 0
        else {
            throw KeychainError(errSecDecode, "a TPM2 key slot is malformed: the file was tampered with", hint: "restore the keychain from a backup")
        }
        sealing = TPM2Sealing(
            pcrBank: UInt16(bank[0]) << 8 | UInt16(bank[1]), pcrMask: mask, hasPIN: pin == 1, sealedPublic: pub, sealedPrivate: priv)
        self.salt = salt
        wrappedMasterKey = wrap
    }

    init(sealing: TPM2Sealing, salt: [UInt8], wrappedMasterKey: [UInt8]) {
        self.sealing = sealing
        self.salt = salt
        self.wrappedMasterKey = wrappedMasterKey
    }
}

/// What a TPM2 slot keeps of the TPM's sealed object: how it is bound (PCRs, PIN) and its
/// public and private parts as the TPM marshalled them (the private part opens in that TPM
/// only). Never a secret.
public struct TPM2Sealing: Equatable, Sendable {
    /// The PCR bank (a TPM_ALG_ID: 0x000B for SHA-256), 0 when no PCR is bound.
    public var pcrBank: UInt16
    /// The PCRs bound, bit i for PCR i.
    public var pcrMask: UInt32
    /// Whether unsealing needs a PIN.
    public var hasPIN: Bool
    /// The sealed object's TPM2B_PUBLIC.
    public var sealedPublic: [UInt8]
    /// The sealed object's TPM2B_PRIVATE.
    public var sealedPrivate: [UInt8]

    /// A sealing of these values.
    public init(pcrBank: UInt16, pcrMask: UInt32, hasPIN: Bool, sealedPublic: [UInt8], sealedPrivate: [UInt8]) {
        self.pcrBank = pcrBank
        self.pcrMask = pcrMask
        self.hasPIN = hasPIN
        self.sealedPublic = sealedPublic
        self.sealedPrivate = sealedPrivate
    }

    /// The PCRs bound, in order.
    public var pcrs: [Int] { (0..<32).filter { pcrMask & (1 << UInt32($0)) != 0 } }
}
