import CTSS2
import KeychainStatus

/// What `kc-tpm seal` writes and `kc-tpm unseal` reads (docs/tpm.md, "The blob"): everything
/// needed to load the sealed object again under the same TPM's storage primary, and
/// nothing secret (the TPM alone can open the private part).
///
///     "kcTP"  version 1  template 1  flags (bit 0: PIN)  0
///     PCR mask (u32, big-endian; bit n = PCR n of the SHA-256 bank)
///     four fields, each a u16 big-endian length then the bytes:
///       the storage primary's name, the policy digest (empty without PCRs),
///       the sealed object's TPM2B_PUBLIC, its TPM2B_PRIVATE (both as the TPM marshals them)
public struct SealedBlob: Equatable, Sendable {
    /// The first four bytes.
    public static let magic: [UInt8] = Array("kcTP".utf8)
    /// The layout's version.
    public static let version: UInt8 = 1
    /// The primary's template: 1 is the TCG's ECC P-256 storage root key.
    public static let eccP256SRK: UInt8 = 1

    /// The primary template the object was sealed under.
    public var template: UInt8 = SealedBlob.eccP256SRK
    /// Whether the object's authValue is the PIN's hash.
    public var hasPIN: Bool
    /// The SHA-256 PCRs the policy binds, bit n for PCR n; 0 for none.
    public var pcrMask: UInt32
    /// The storage primary's name when sealed: another TPM (or a cleared owner
    /// hierarchy) makes another primary, which is told before anything is loaded.
    public var primaryName: [UInt8]
    /// The sealed object's policy digest (PolicyPCR, then PolicyAuthValue with a PIN).
    public var policyDigest: [UInt8]
    /// The sealed object's TPM2B_PUBLIC, marshalled.
    public var publicArea: [UInt8]
    /// Its TPM2B_PRIVATE, marshalled (encrypted by the TPM under the primary).
    public var privateArea: [UInt8]

    /// The blob's bytes.
    public var bytes: [UInt8] {
        var out = Self.magic + [Self.version, template, hasPIN ? 1 : 0, 0]
        out += [UInt8(pcrMask >> 24), UInt8(pcrMask >> 16 & 0xFF), UInt8(pcrMask >> 8 & 0xFF), UInt8(pcrMask & 0xFF)]
        for field in [primaryName, policyDigest, publicArea, privateArea] {
            out += [UInt8(field.count >> 8), UInt8(field.count & 0xFF)] + field
        }
        return out
    }

    init(hasPIN: Bool, pcrMask: UInt32, primaryName: [UInt8], policyDigest: [UInt8], publicArea: [UInt8], privateArea: [UInt8]) {
        self.hasPIN = hasPIN
        self.pcrMask = pcrMask
        self.primaryName = primaryName
        self.policyDigest = policyDigest
        self.publicArea = publicArea
        self.privateArea = privateArea
    }

    /// Reads a blob, refusing anything that is not exactly one: a wrong magic, version or
    /// template, unknown flags, a field running past the end or bytes after the last, a
    /// public or private part that does not unmarshal to its own length.
    /// - Throws: errSecDecode, or errSecWrongSecVersion for a newer layout.
    public init(_ bytes: [UInt8]) throws(KeychainError) {
        func bad(_ why: String) -> KeychainError {
            KeychainError(errSecDecode, "the sealed key is damaged: \(why)", hint: "it is not what `kc-tpm seal` wrote")
        }
        guard bytes.count >= 12, Array(bytes[0..<4]) == Self.magic else { throw bad("it does not start as a kc-tpm blob") }
        guard bytes[4] == Self.version else {
            throw KeychainError(errSecWrongSecVersion, "the sealed key is of layout \(bytes[4]); this kc-tpm reads layout \(Self.version)")
        }
        guard bytes[5] == Self.eccP256SRK else { throw bad("an unknown primary template \(bytes[5])") }
        guard bytes[6] & ~1 == 0, bytes[7] == 0 else { throw bad("unknown flags") }
        let mask = bytes[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard mask < 1 << 24 else { throw bad("a PCR above 23") }
        var at = 12
        var fields: [[UInt8]] = []
        for _ in 0..<4 {
            guard at + 2 <= bytes.count else { throw bad("it is truncated") }
            let count = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            at += 2
            guard at + count <= bytes.count else { throw bad("it is truncated") }
            fields.append(Array(bytes[at..<at + count]))
            at += count
        }
        guard at == bytes.count else { throw bad("bytes after its end") }
        guard fields[0].count == 34 else { throw bad("a storage key name of \(fields[0].count) bytes") }
        guard mask == 0 ? fields[1].isEmpty : fields[1].count == 32 else { throw bad("a policy that does not match its PCRs") }
        guard var sealedPublic = Self.unmarshalsPublic(fields[2]) else { throw bad("its public part does not parse") }
        guard fields[1].withUnsafeBufferPointer({ kc_tpm_sealed_matches(&sealedPublic, bytes[6] & 1 == 1 ? 1 : 0, $0.baseAddress, $0.count) }) == 1 else {
            throw bad("its header does not say what its sealed object is (PIN, PCRs)")
        }
        guard Self.unmarshalsPrivate(fields[3]) != nil else { throw bad("its private part does not parse") }
        self.init(
            hasPIN: bytes[6] & 1 == 1, pcrMask: mask, primaryName: fields[0], policyDigest: fields[1], publicArea: fields[2],
            privateArea: fields[3])
    }

    /// The TPM2B_PUBLIC these bytes marshal, when they are exactly one.
    static func unmarshalsPublic(_ bytes: [UInt8]) -> TPM2B_PUBLIC? {
        var out = TPM2B_PUBLIC()
        var offset = 0
        let rc = bytes.withUnsafeBufferPointer { Tss2_MU_TPM2B_PUBLIC_Unmarshal($0.baseAddress, $0.count, &offset, &out) }
        return rc == 0 && offset == bytes.count ? out : nil
    }

    /// The TPM2B_PRIVATE these bytes marshal, when they are exactly one.
    static func unmarshalsPrivate(_ bytes: [UInt8]) -> TPM2B_PRIVATE? {
        var out = TPM2B_PRIVATE()
        var offset = 0
        let rc = bytes.withUnsafeBufferPointer { Tss2_MU_TPM2B_PRIVATE_Unmarshal($0.baseAddress, $0.count, &offset, &out) }
        return rc == 0 && offset == bytes.count ? out : nil
    }

    /// Marshals a TPM2B_PUBLIC.
    static func marshal(_ value: TPM2B_PUBLIC) -> [UInt8] {
        var value = value
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size + 2)
        var offset = 0
        let rc = buffer.withUnsafeMutableBufferPointer { Tss2_MU_TPM2B_PUBLIC_Marshal(&value, $0.baseAddress, $0.count, &offset) }
        return rc == 0 ? Array(buffer.prefix(offset)) : []
    }

    /// Marshals a TPM2B_PRIVATE.
    static func marshal(_ value: TPM2B_PRIVATE) -> [UInt8] {
        var value = value
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PRIVATE>.size + 2)
        var offset = 0
        let rc = buffer.withUnsafeMutableBufferPointer { Tss2_MU_TPM2B_PRIVATE_Marshal(&value, $0.baseAddress, $0.count, &offset) }
        return rc == 0 ? Array(buffer.prefix(offset)) : []
    }
}
