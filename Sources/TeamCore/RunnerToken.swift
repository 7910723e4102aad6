internal import CSodium
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// A CI runner's token for a team keychain (docs/team.md): everything the runner needs,
/// in one line for a CI secret store,
///
///     kcr1:<base64url, no padding, of
///           u8 1 ‖ keychain_id[32] ‖ seed[32] ‖ u16be len ‖ team name ‖ u16be len ‖ dsn>
///
/// `kc unlock --team-token-file FILE` (or `KC_TEAM_TOKEN`) reads it, takes the team name
/// out of it and hands the whole token to the team agent as the keychain's password.
///
/// The token holds the runner's member seed and a DSN that may carry its database
/// password: both stay in `SecureBytes`, and so does the encoded text.
///
///     let token = try RunnerToken.parse(secretBytes)
///     print(token.name)   // "infra": the keychain is team:infra
public struct RunnerToken: ~Copyable {
    /// The text every token starts with.
    public static let prefix = "kcr1:"
    /// The version byte of the format above.
    public static let version: UInt8 = 1
    /// The length of a keychain id and of a seed.
    public static let idLength = 32
    public static let seedLength = 32

    /// The keychain's id (BLAKE2b-256 of its genesis record): public, pins the keychain.
    public let keychainID: [UInt8]
    /// The runner's 32-byte member seed (its X25519 and Ed25519 keys derive from it).
    public let seed: SecureBytes
    /// The team name, as in `team:NAME`.
    public let name: String
    /// The PostgreSQL connection string (no NUL byte), which may hold the runner role's
    /// password.
    public let dsn: SecureBytes

    /// A token from its parts.
    /// - Throws: errSecParam when the id or seed is not 32 bytes, the name is not a team
    ///   name (`TeamName.validate`), or the DSN is empty, longer than 65,535 bytes or holds
    ///   a NUL byte.
    public init(keychainID: [UInt8], seed: consuming SecureBytes, name: String, dsn: consuming SecureBytes) throws {
        guard keychainID.count == Self.idLength else {
            throw KeychainError(errSecParam, "a keychain id is \(Self.idLength) bytes, not \(keychainID.count)")
        }
        guard seed.count == Self.seedLength else {
            throw KeychainError(errSecParam, "a member seed is \(Self.seedLength) bytes, not \(seed.count)")
        }
        try TeamName.validate(name)
        guard name.utf8.count <= Int(UInt16.max) else { throw KeychainError(errSecParam, "the team name is too long") }
        try Self.checkDSN(dsn)
        self.keychainID = keychainID
        self.seed = seed
        self.name = name
        self.dsn = dsn
    }

    /// The token's text, `kcr1:…` (no newline), in secure memory.
    public func encoded() throws -> SecureBytes {
        let nameBytes = Array(name.utf8)
        let length = 1 + Self.idLength + Self.seedLength + 2 + nameBytes.count + 2 + dsn.count
        let binary = try SecureBytes(count: length)
        binary.withUnsafeMutableBytes { out in
            var at = 0
            func put(_ bytes: UnsafeRawBufferPointer) {
                guard let base = bytes.baseAddress, bytes.count > 0, let target = out.baseAddress else { return }
                (target + at).copyMemory(from: base, byteCount: bytes.count)
                at += bytes.count
            }
            func putLength(_ n: Int) {
                out[at] = UInt8(truncatingIfNeeded: n >> 8)
                out[at + 1] = UInt8(truncatingIfNeeded: n)
                at += 2
            }
            out[at] = Self.version
            at += 1
            keychainID.withUnsafeBytes { put($0) }
            seed.withUnsafeBytes { put($0) }
            putLength(nameBytes.count)
            nameBytes.withUnsafeBytes { put($0) }
            putLength(dsn.count)
            dsn.withUnsafeBytes { put($0) }
        }
        let prefix = Array(Self.prefix.utf8)
        // The base64 text with its terminating NUL, then the prefix before it.
        let capacity = (length + 2) / 3 * 4 + 1
        let text = try SecureBytes(count: capacity)
        let written = binary.withUnsafeBytes { source in
            text.withUnsafeMutableBytes { out -> Int in
                guard let target = out.baseAddress?.assumingMemoryBound(to: CChar.self),
                    let from = source.baseAddress?.assumingMemoryBound(to: UInt8.self)
                else { return 0 }
                _ = sodium_bin2base64(target, out.count, from, source.count, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
                return strlen(target)
            }
        }
        let token = try SecureBytes(count: prefix.count + written)
        token.withUnsafeMutableBytes { out in
            for (i, byte) in prefix.enumerated() { out[i] = byte }
            text.withUnsafeBytes { encoded in
                for i in 0..<written { out[prefix.count + i] = encoded[i] }
            }
        }
        return token
    }

    /// Reads a token's text (`kcr1:…`, nothing before or after it).
    /// - Throws: errSecParam, saying what is wrong (never quoting the token): not starting
    ///   with `kcr1:`, not base64url without padding, another version, too short, a name that
    ///   is not a team name, a malformed DSN, or bytes after the DSN.
    public static func parse(_ text: borrowing SecureBytes) throws -> RunnerToken {
        let prefix = Array(Self.prefix.utf8)
        let hasPrefix = text.withUnsafeBytes { bytes in
            bytes.count >= prefix.count && prefix.indices.allSatisfy { bytes[$0] == prefix[$0] }
        }
        guard hasPrefix else { throw malformed("it does not start with \(Self.prefix)") }
        let encodedLength = text.count - prefix.count
        let binary = try SecureBytes(count: encodedLength / 4 * 3 + 3)
        var decoded = 0
        let rc = text.withUnsafeBytes { bytes in
            binary.withUnsafeMutableBytes { out -> Int32 in
                guard let target = out.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
                else { return -1 }
                // No `b64_end`: anything that is not base64url (padding, a space, a newline
                // left in) fails the whole decoding, as do non-zero unused bits.
                return sodium_base642bin(
                    target, out.count, base + prefix.count, encodedLength, nil, &decoded, nil,
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING)
            }
        }
        guard rc == 0, encodedLength > 0 else { throw malformed("what follows \(Self.prefix) is not base64url without padding") }
        // The fields, as ranges of `binary`: the seed and the DSN are copied out only into
        // secure memory.
        let fields: (id: [UInt8], seed: Range<Int>, name: String, dsn: Range<Int>) = try binary.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[0..<decoded])
            guard bytes.count >= 1 else { throw malformed("it is empty") }
            guard bytes[0] == Self.version else {
                throw malformed("it is version \(bytes[0]), this kc reads version \(Self.version)")
            }
            var at = 1 + idLength + seedLength
            /// The next length-prefixed field's range.
            func field() throws -> Range<Int> {
                guard at + 2 <= bytes.count else { throw malformed("it is too short") }
                let n = Int(bytes[at]) << 8 | Int(bytes[at + 1])
                guard at + 2 + n <= bytes.count else { throw malformed("it is too short") }
                defer { at += 2 + n }
                return (at + 2)..<(at + 2 + n)
            }
            let nameRange = try field()
            let dsnRange = try field()
            guard at == bytes.count else { throw malformed("something follows its DSN (\(bytes.count - at) bytes)") }
            guard let name = String(validating: bytes[nameRange], as: UTF8.self) else { throw malformed("its team name is not UTF-8") }
            return (Array(bytes[1..<(1 + idLength)]), (1 + idLength)..<(1 + idLength + seedLength), name, dsnRange)
        }
        do {
            try TeamName.validate(fields.name)
        } catch let error as KeychainError {
            throw malformed("its team name: \(error.message)")
        }
        let seed = try binary.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[fields.seed]), guarded: true) }
        let dsn = try binary.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[fields.dsn])) }
        do {
            try checkDSN(dsn)
        } catch let error as KeychainError {
            throw malformed(error.message)
        }
        return try RunnerToken(keychainID: fields.id, seed: seed, name: fields.name, dsn: dsn)
    }

    /// errSecParam for a token that cannot be read.
    private static func malformed(_ why: String) -> KeychainError {
        KeychainError(
            errSecParam, "the runner token is malformed: \(why)",
            hint: "give the whole kcr1:… line `kc team add-runner` printed")
    }

    /// Checks a DSN: 1 to 65,535 bytes without a NUL byte (libpq takes a C string).
    private static func checkDSN(_ dsn: borrowing SecureBytes) throws {
        let ok = dsn.withUnsafeBytes { bytes in (1...Int(UInt16.max)).contains(bytes.count) && !bytes.contains(0) }
        guard ok else { throw KeychainError(errSecParam, "the DSN is empty, longer than 65,535 bytes or holds a NUL byte") }
    }
}
