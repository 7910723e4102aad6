import KeychainCore
internal import CSodium

/// A member's keys (`docs/format.md` §9.1): one 32-byte seed, kept on the device (a team
/// file) or in a runner token, gives an X25519 pair that receives the master key and an
/// Ed25519 pair that signs.
///
///     box seed  = BLAKE2b-256(key = seed, "kc team box")   -> crypto_box_seed_keypair
///     sign seed = BLAKE2b-256(key = seed, "kc team sign")  -> crypto_sign_seed_keypair
///     member_id   = BLAKE2b-128("kc team member v1"      ‖ box pk ‖ sign pk)
///     fingerprint = BLAKE2b-160("kc team fingerprint v1" ‖ box pk ‖ sign pk), 40 hex in
///                   10 groups of 4: `7f3a-91c2-…`
///
///     let me = try MemberKeys.generate()
///     print(me.fingerprint)                      // compared out of band by an admin
///     let sealed = try MemberKeys.seal(secret, to: me.boxPublicKey)
///     let opened = try me.open(sealed: sealed)
///
/// The seed and both secret keys live in libsodium's guarded heap and are wiped when the
/// last reference goes. A class, so that the keys are shared rather than copied.
/// - SeeAlso: https://doc.libsodium.org/public-key_cryptography/sealed_boxes and
///   https://doc.libsodium.org/public-key_cryptography/public-key_signatures
package final class MemberKeys: @unchecked Sendable {
    /// Length of the seed, of each public key and of the box's secret key.
    package static let seedBytes = 32
    /// Length of a member id.
    package static let memberIDBytes = 16
    /// Length of a detached Ed25519 signature.
    package static let signatureBytes = 64
    /// The overhead `crypto_box_seal` adds to a plaintext (ephemeral key and tag).
    package static let sealOverhead = Int(crypto_box_sealbytes())

    /// The context hashed under the seed for the X25519 pair.
    static let boxContext = "kc team box"
    /// The context hashed under the seed for the Ed25519 pair.
    static let signContext = "kc team sign"
    /// The label before the public keys in a member id.
    static let memberIDLabel = "kc team member v1"
    /// The label before the public keys in a fingerprint.
    static let fingerprintLabel = "kc team fingerprint v1"

    /// The 32-byte seed everything else derives from.
    package let seed: SecureBytes
    /// The X25519 public key (32 bytes): master-key wraps are sealed to it.
    package let boxPublicKey: [UInt8]
    /// The Ed25519 public key (32 bytes): verifies what this member signs.
    package let signPublicKey: [UInt8]
    /// `BLAKE2b-128("kc team member v1" ‖ boxPublicKey ‖ signPublicKey)`.
    package let memberID: [UInt8]
    /// The fingerprint this device prints and an admin types (`7f3a-91c2-…`).
    package let fingerprint: String
    /// The X25519 secret key (32 bytes).
    private let boxSecretKey: SecureBytes
    /// The Ed25519 secret key in libsodium's form (seed ‖ public key, 64 bytes).
    private let signSecretKey: SecureBytes

    /// Zeroes the seed and both secret keys in place (a revoked team keychain's,
    /// `KeyRevocation`): whoever still holds this object holds zeros from now on.
    package func wipe() {
        seed.withUnsafeMutableBytes { Sodium.wipe($0) }
        boxSecretKey.withUnsafeMutableBytes { Sodium.wipe($0) }
        signSecretKey.withUnsafeMutableBytes { Sodium.wipe($0) }
    }

    /// Derives both key pairs from a 32-byte seed (copied into guarded memory).
    ///
    ///     let keys = try MemberKeys(seed: seedFromTeamFile)
    ///
    /// - Throws: `errSecParam` when the seed is not 32 bytes; `errSecAllocate` when secure
    ///   memory cannot be had.
    package init(seed: borrowing SecureBytes) throws {
        guard seed.count == Self.seedBytes else {
            throw KeychainError(errSecParam, "a member seed has \(Self.seedBytes) bytes, not \(seed.count)")
        }
        let ownSeed = try seed.withUnsafeBytes { try SecureBytes(copying: $0, guarded: true) }
        let boxSeed = try Self.derive(Self.boxContext, from: ownSeed)
        let signSeed = try Self.derive(Self.signContext, from: ownSeed)
        var boxPK = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var signPK = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        let boxSK = try SecureBytes(count: Int(crypto_box_SECRETKEYBYTES), guarded: true)
        let signSK = try SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES), guarded: true)
        let rcBox = boxSK.withUnsafeMutableBytes { sk in
            boxSeed.withUnsafeBytes { s in
                boxPK.withUnsafeMutableBytes { pk in
                    crypto_box_seed_keypair(
                        pk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        let rcSign = signSK.withUnsafeMutableBytes { sk in
            signSeed.withUnsafeBytes { s in
                signPK.withUnsafeMutableBytes { pk in
                    crypto_sign_seed_keypair(
                        pk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard rcBox == 0, rcSign == 0 else {
            throw KeychainError(errSecInternalError, "libsodium could not derive a member's key pairs")
        }
        self.seed = ownSeed
        self.boxSecretKey = boxSK
        self.signSecretKey = signSK
        self.boxPublicKey = boxPK
        self.signPublicKey = signPK
        self.memberID = Self.memberID(boxPublicKey: boxPK, signPublicKey: signPK)
        self.fingerprint = Self.fingerprint(boxPublicKey: boxPK, signPublicKey: signPK)
    }

    /// A new member: a fresh random seed from the system's CSPRNG.
    /// - Throws: `errSecAllocate` when secure memory cannot be had.
    package static func generate() throws -> MemberKeys {
        try Sodium.ensureReady()
        let seed = try SecureBytes(count: seedBytes, guarded: true)
        seed.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return try MemberKeys(seed: seed)
    }

    /// `BLAKE2b-256` keyed with the seed over a context: the seed of one key pair.
    private static func derive(_ context: String, from seed: borrowing SecureBytes) throws -> SecureBytes {
        let out = try SecureBytes(count: 32, guarded: true)
        let label = Array(context.utf8)
        out.withUnsafeMutableBytes { o in
            seed.withUnsafeBytes { k in
                label.withUnsafeBytes { l in
                    _ = crypto_generichash(
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                        l.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(l.count),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return out
    }

    // MARK: Identity

    /// The member id of a pair of public keys: `BLAKE2b-128("kc team member v1" ‖ box ‖ sign)`.
    package static func memberID(boxPublicKey: [UInt8], signPublicKey: [UInt8]) -> [UInt8] {
        Hashing.blake2b(Array(memberIDLabel.utf8) + boxPublicKey + signPublicKey, length: memberIDBytes)
    }

    /// The fingerprint of a pair of public keys: `BLAKE2b-160("kc team fingerprint v1" ‖ box ‖
    /// sign)` as 40 lower-case hex digits in 10 groups of 4 joined by `-`.
    ///
    ///     MemberKeys.fingerprint(boxPublicKey: box, signPublicKey: sign)   // "7f3a-91c2-…"
    package static func fingerprint(boxPublicKey: [UInt8], signPublicKey: [UInt8]) -> String {
        let digest = Hashing.blake2b(Array(fingerprintLabel.utf8) + boxPublicKey + signPublicKey, length: 20)
        return group(hex(digest))
    }

    /// A fingerprint as someone typed it, in the printed form: upper case, spaces and
    /// missing or extra dashes are accepted.
    ///
    ///     try MemberKeys.normalizeFingerprint("7F3A 91C2 …")   // "7f3a-91c2-…"
    ///
    /// - Throws: `errSecParam` when what remains is not 40 hex digits.
    package static func normalizeFingerprint(_ typed: String) throws -> String {
        var digits = ""
        for c in typed.unicodeScalars {
            switch c {
            case "-", " ", "\t": continue
            case "0"..."9", "a"..."f": digits.unicodeScalars.append(c)
            case "A"..."F": digits.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: c.value) + 0x20))
            default:
                throw KeychainError(
                    errSecParam, "\"\(typed)\" is not a member fingerprint: it has a character other than hex digits, dashes and spaces",
                    hint: "copy the fingerprint the device printed (kc team join), 40 hex digits such as 7f3a-91c2-…")
            }
        }
        guard digits.utf8.count == 40 else {
            throw KeychainError(
                errSecParam, "\"\(typed)\" is not a member fingerprint: it has \(digits.utf8.count) hex digits, not 40",
                hint: "copy the fingerprint the device printed (kc team join), 40 hex digits such as 7f3a-91c2-…")
        }
        return group(digits)
    }

    /// Lower-case hex of bytes.
    package static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    /// 40 hex digits in groups of 4 joined by `-`.
    private static func group(_ digits: String) -> String {
        let utf8 = Array(digits.utf8)
        return stride(from: 0, to: utf8.count, by: 4)
            .map { String(decoding: utf8[$0..<min($0 + 4, utf8.count)], as: UTF8.self) }
            .joined(separator: "-")
    }

    // MARK: Signatures

    /// A detached Ed25519 signature (64 bytes) of `message` (`crypto_sign_detached`).
    package func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureBytes)
        signSecretKey.withUnsafeBytes { sk in
            message.withUnsafeBytes { m in
                signature.withUnsafeMutableBytes { s in
                    _ = crypto_sign_detached(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by `publicKey`
    /// (`crypto_sign_verify_detached`). False for any malformed length.
    package static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureBytes, publicKey.count == Int(crypto_sign_PUBLICKEYBYTES),
            (try? Sodium.ensureReady()) != nil
        else { return false }
        return signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                publicKey.withUnsafeBytes { pk in
                    crypto_sign_verify_detached(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        pk.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
    }

    // MARK: Sealed boxes

    /// Seals `plaintext` to an X25519 public key (`crypto_box_seal`: an ephemeral key pair,
    /// anonymous sender). The result is `plaintext.count + sealOverhead` bytes.
    /// - Throws: `errSecParam` when the public key is not 32 bytes or libsodium refuses it.
    package static func seal(_ plaintext: [UInt8], to boxPublicKey: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, to: boxPublicKey) }
    }

    /// Seals secret bytes to an X25519 public key without copying them into an array.
    /// - Throws: `errSecParam` when the public key is not 32 bytes or libsodium refuses it.
    package static func seal(_ plaintext: borrowing SecureBytes, to boxPublicKey: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, to: boxPublicKey) }
    }

    /// Seals raw bytes (see `seal(_:to:)`).
    private static func seal(_ plaintext: UnsafeRawBufferPointer, to boxPublicKey: [UInt8]) throws -> [UInt8] {
        try Sodium.ensureReady()
        guard boxPublicKey.count == Int(crypto_box_PUBLICKEYBYTES) else {
            throw KeychainError(errSecParam, "an X25519 public key has 32 bytes, not \(boxPublicKey.count)")
        }
        var sealed = [UInt8](repeating: 0, count: plaintext.count + sealOverhead)
        let rc = sealed.withUnsafeMutableBytes { out in
            boxPublicKey.withUnsafeBytes { pk in
                crypto_box_seal(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    pk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else { throw KeychainError(errSecParam, "cannot seal to this X25519 public key") }
        return sealed
    }

    /// Opens a box sealed to this member (`crypto_box_seal_open`) into scratch secure memory.
    /// - Throws: `errSecDecode` when it is short, was sealed to another key or was modified.
    package func open(sealed: [UInt8]) throws -> SecureBytes {
        guard sealed.count >= Self.sealOverhead else {
            throw KeychainError(errSecDecode, "a sealed box for this member is truncated (\(sealed.count) bytes)")
        }
        let out = try SecureBytes(count: sealed.count - Self.sealOverhead)
        let rc = out.withUnsafeMutableBytes { o in
            sealed.withUnsafeBytes { c in
                boxPublicKey.withUnsafeBytes { pk in
                    boxSecretKey.withUnsafeBytes { sk in
                        crypto_box_seal_open(
                            o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            c.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(c.count),
                            pk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        guard rc == 0 else {
            throw KeychainError(errSecDecode, "a sealed box does not open with this member's key: it was sealed to another key or modified")
        }
        return out
    }
}
