/// The fields of a TPM2 slot (`docs/format.md` §2.2): u16 pcr_bank (a TPM_ALG_ID, 0 when no
/// PCR is bound) ‖ u32 pcr_mask (bit i = PCR i) ‖ u8 pin (0 or 1) ‖ lp(sealed_blob) ‖
/// lp(salt) ‖ lp(wrapped_master_key): the master key sealed under `SlotWrap.key` of the
/// 32-byte secret the TPM holds sealed in `sealed_blob` (what `kc-tpm seal` wrote,
/// `docs/tpm.md`). Nothing of the secret itself is stored.
struct TPM2Slot {
    var sealing: TPM2Sealing
    var salt: [UInt8]
    var wrappedMasterKey: [UInt8]

    /// The fields' bytes.
    var fields: [UInt8] {
        var w = ByteWriter(capacity: 24 + sealing.sealedBlob.count + salt.count + wrappedMasterKey.count)
        w.raw([UInt8(sealing.pcrBank >> 8), UInt8(sealing.pcrBank & 0xFF)])
        w.u32(sealing.pcrMask)
        w.u8(sealing.hasPIN ? 1 : 0)
        w.lengthPrefixed(sealing.sealedBlob)
        w.lengthPrefixed(salt)
        w.lengthPrefixed(wrappedMasterKey)
        return w.bytes
    }

    /// Parses a TPM2 slot's fields, refusing a blob whose own header says another PIN flag
    /// or other PCRs than the slot lists. - Throws: errSecDecode for any other layout.
    init(fields: [UInt8]) throws {
        var r = ByteReader(fields)
        guard let bank = r.raw(2), let mask = r.u32(), let pin = r.u8(), pin <= 1,
            let blob = r.lengthPrefixed(max: TPM2Sealing.maxBlob),
            let salt = r.lengthPrefixed(max: 64), salt.count == SlotWrap.saltBytes,
            let wrap = r.lengthPrefixed(max: 256), wrap.count == RecoverySlot.wrapBytes, r.remaining == 0,
            let sealing = try? TPM2Sealing(blob: blob),
            sealing.pcrBank == UInt16(bank[0]) << 8 | UInt16(bank[1]), sealing.pcrMask == mask, sealing.hasPIN == (pin == 1)
        else {
            throw KeychainError(errSecDecode, "a TPM2 key slot is malformed: the file was tampered with", hint: "restore the keychain from a backup")
        }
        self.sealing = sealing
        self.salt = salt
        wrappedMasterKey = wrap
    }

    init(sealing: TPM2Sealing, salt: [UInt8], wrappedMasterKey: [UInt8]) {
        self.sealing = sealing
        self.salt = salt
        self.wrappedMasterKey = wrappedMasterKey
    }
}

/// What a TPM2 slot keeps of the TPM's sealed object: the blob `kc-tpm seal` wrote
/// (`docs/tpm.md`, "The blob": the storage primary's name, the policy digest and the sealed
/// object's public and private parts; the private part opens in that TPM only), and what
/// its fixed header says (PIN, PCRs) for `kc keyslot list`. Never a secret.
///
/// kc reads only the blob's first 12 bytes, which every layout of kc-tpm keeps: "kcTP",
/// the layout, the template, the flags (bit 0: a PIN), a zero byte and the SHA-256 PCR mask.
/// The rest is kc-tpm's to check.
public struct TPM2Sealing: Equatable, Sendable {
    /// The PCR bank (a TPM_ALG_ID: 0x000B for SHA-256), 0 when no PCR is bound.
    public let pcrBank: UInt16
    /// The PCRs bound, bit i for PCR i.
    public let pcrMask: UInt32
    /// Whether unsealing needs a PIN.
    public let hasPIN: Bool
    /// The blob, as `kc-tpm seal` wrote it and `kc-tpm unseal` reads it.
    public let sealedBlob: [UInt8]

    /// The longest blob kept: what `kc-tpm unseal` reads at most.
    public static let maxBlob = 4096

    /// The sealing `blob` describes.
    /// - Throws: errSecDecode for bytes that do not start as a kc-tpm blob, or are longer
    ///   than kc-tpm reads.
    public init(blob: [UInt8]) throws {
        guard blob.count > 12, blob.count <= Self.maxBlob, Array(blob[0..<4]) == Array("kcTP".utf8), blob[4] >= 1,
            blob[6] & ~1 == 0, blob[7] == 0
        else {
            throw KeychainError(errSecDecode, "kc-tpm's sealed key is not a kc-tpm blob", hint: "kc-tpm beside kc is not the one this kc was built with")
        }
        let mask = blob[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard mask < 1 << 24 else { throw KeychainError(errSecDecode, "kc-tpm's sealed key names a PCR above 23") }
        pcrMask = mask
        pcrBank = mask == 0 ? 0 : 0x000B
        hasPIN = blob[6] & 1 == 1
        sealedBlob = blob
    }

    /// The PCRs bound, in order.
    public var pcrs: [Int] { PCRList.numbers(pcrMask) }
}
