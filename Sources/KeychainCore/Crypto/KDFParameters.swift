internal import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// The stored key-derivation parameters of a keychain (`docs/format.md` §2).
package struct KDFParameters: Equatable, Sendable {
    /// Only Argon2id13 exists in format 1.
    static let argon2id13: UInt32 = 2
    static let saltBytes = 16
    static let minOps: UInt64 = 2, maxOps: UInt64 = 16
    static let minMem: UInt64 = 64 << 20, maxMem: UInt64 = 1 << 30

    /// The algorithm (2 = Argon2id13, the only one).
    package var algorithm: UInt32
    /// Argon2's number of passes.
    package var opslimit: UInt64
    /// Argon2's memory in bytes.
    package var memlimit: UInt64
    /// The 16-byte random salt.
    package var salt: [UInt8]

    /// Fresh parameters for a profile, with a new random salt.
    package init(profile: KDFProfile) {
        algorithm = Self.argon2id13
        switch profile {
        case .interactive: opslimit = 2; memlimit = 64 << 20
        case .moderate: opslimit = 3; memlimit = 256 << 20
        case .sensitive: opslimit = 4; memlimit = 1 << 30
        }
        salt = Sodium.randomBytes(Self.saltBytes)
    }

    package init(algorithm: UInt32, opslimit: UInt64, memlimit: UInt64, salt: [UInt8]) {
        self.algorithm = algorithm
        self.opslimit = opslimit
        self.memlimit = memlimit
        self.salt = salt
    }

    /// The profile these parameters correspond to, if any.
    package var profile: KDFProfile? {
        KDFProfile.allCases.first { p in
            let q = KDFParameters(profile: p)
            return q.opslimit == opslimit && q.memlimit == memlimit
        }
    }

    /// Refuses parameters a tampered file could use to downgrade or exhaust memory; runs
    /// before any allocation. - Throws: `errSecDecode`.
    package func validate() throws {
        guard algorithm == Self.argon2id13 else {
            throw KeychainError(errSecDecode, "unsupported key-derivation algorithm \(algorithm) in the keychain header")
        }
        guard (Self.minOps...Self.maxOps).contains(opslimit) else {
            throw KeychainError(
                errSecDecode, "key-derivation opslimit \(opslimit) is outside \(Self.minOps)...\(Self.maxOps): the keychain header is damaged or tampered with")
        }
        guard (Self.minMem...Self.maxMem).contains(memlimit) else {
            throw KeychainError(errSecDecode, "key-derivation memlimit \(memlimit) is outside 64 MiB...1 GiB: the keychain header is damaged or tampered with")
        }
        let physical = UInt64(max(sysconf(Int32(_SC_PHYS_PAGES)), 0)) &* UInt64(max(sysconf(Int32(_SC_PAGESIZE)), 0))
        if physical > 0, memlimit > physical / 2 {
            throw KeychainError(errSecAllocate, "key derivation needs \(memlimit >> 20) MiB, more than half of this machine's memory")
        }
        guard salt.count == Self.saltBytes else {
            throw KeychainError(errSecDecode, "key-derivation salt has \(salt.count) bytes, expected 16")
        }
    }

    /// Derives the 32-byte key-encryption key from a password (`crypto_pwhash`, Argon2id13).
    /// - Throws: `errSecDecode` for bad parameters, `errSecAllocate` when Argon2 cannot get memory.
    package func deriveKey(password: borrowing SecureBytes) throws -> SymmetricKey {
        try validate()
        let kek = try SecureBytes(count: 32, guarded: true)
        let rc = kek.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { pw in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                        pw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? UnsafePointer(bitPattern: 1)!, UInt64(pw.count),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        opslimit, Int(memlimit), Int32(crypto_pwhash_ALG_ARGON2ID13))
                }
            }
        }
        guard rc == 0 else {
            throw KeychainError(errSecAllocate, "key derivation failed: Argon2id could not allocate \(memlimit >> 20) MiB")
        }
        return SymmetricKey(kek)
    }
}
