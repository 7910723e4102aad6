/// A blob shaped as `kc-tpm seal` writes one (docs/tpm.md, "The blob"), for tests of the
/// keychain half of a TPM2 slot that need no TPM: its header says the PIN and PCRs, its
/// fields are filler no TPM would load.
public enum TestTPMBlob {
    /// A blob whose header has `pin` and `pcrMask`.
    public static func make(pin: Bool, pcrMask: UInt32) -> [UInt8] {
        var out = Array("kcTP".utf8) + [1, 1, pin ? 1 : 0, 0]
        out += [UInt8(pcrMask >> 24), UInt8(pcrMask >> 16 & 0xFF), UInt8(pcrMask >> 8 & 0xFF), UInt8(pcrMask & 0xFF)]
        for field in [Array(repeating: UInt8(0x0B), count: 34), [], Array(repeating: 0x11, count: 90), Array(repeating: 0x22, count: 160)] {
            out += [UInt8(field.count >> 8), UInt8(field.count & 0xFF)] + field
        }
        return out
    }
}
