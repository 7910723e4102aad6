import KeychainCore
internal import CSodium

/// A CI runner's whole membership in one string (`docs/format.md` §9.2): the keychain id, the
/// member seed, the team name and the DSN, so that a runner needs no team file and no
/// password. What `kc team add-runner` prints once, for the CI secret store:
///
///     kcr1:<base64url, no padding, of u8 1 ‖ keychain_id[32] ‖ seed[32] ‖
///                                     u16be len ‖ team name ‖ u16be len ‖ dsn>
///
///     let token = try RunnerToken.parse(environmentValue)
///     let keys = try MemberKeys(seed: token.seed)
///
/// The token is a secret (it holds the seed); the decoded bytes are wiped after parsing,
/// but the string a caller passes in is the caller's to scrub.
package struct RunnerToken: ~Copyable {
    /// The token's prefix.
    package static let prefix = "kcr1:"
    /// The version byte after the prefix.
    static let version: UInt8 = 1

    /// The keychain id (32 bytes) the runner's checks pin.
    package let keychainID: [UInt8]
    /// The runner's 32-byte member seed.
    package let seed: SecureBytes
    /// The team keychain's name (`team:NAME`).
    package let teamName: String
    /// The PostgreSQL connection string.
    package let dsn: String

    /// Parses a token.
    /// - Throws: `errSecParam` when it is not a kc runner token (the message never repeats it).
    package static func parse(_ token: String) throws -> RunnerToken {
        let malformed = KeychainError(errSecParam, "the team token is not a kc runner token (kcr1:…)",
                                      hint: "copy the whole line `kc team add-runner` printed")
        let text = token.trimmingASCIIWhitespace
        guard text.hasPrefix(prefix) else { throw malformed }
        let encoded = Array(text.utf8.dropFirst(prefix.utf8.count))
        try Sodium.ensureReady()
        var decoded = [UInt8](repeating: 0, count: encoded.count)
        defer { Sodium.wipe(&decoded) }
        var length = 0
        let rc = encoded.withUnsafeBufferPointer { e in
            decoded.withUnsafeMutableBufferPointer { d in
                e.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                    guard let out = d.baseAddress else { return -1 }
                    return sodium_base642bin(out, d.count, chars.baseAddress, chars.count, nil, &length, nil,
                                             sodium_base64_VARIANT_URLSAFE_NO_PADDING)
                }
            }
        }
        guard rc == 0, length >= 1 + 32 + 32 + 2 + 1 + 2 + 1, decoded[0] == version else { throw malformed }
        let keychainID = Array(decoded[1..<33])
        let seed = try SecureBytes(count: MemberKeys.seedBytes, guarded: true)
        seed.withUnsafeMutableBytes { s in
            for i in 0..<MemberKeys.seedBytes { s[i] = decoded[33 + i] }
        }
        var offset = 65
        func field() -> String? {
            guard length - offset >= 2 else { return nil }
            let n = Int(decoded[offset]) << 8 | Int(decoded[offset + 1])
            guard length - offset - 2 >= n else { return nil }
            defer { offset += 2 + n }
            return String(validating: decoded[(offset + 2)..<(offset + 2 + n)], as: UTF8.self)
        }
        guard let name = field(), (try? TeamName.validate(name)) != nil, let dsn = field(), !dsn.isEmpty, offset == length else {
            throw malformed
        }
        return RunnerToken(keychainID: keychainID, seed: seed, teamName: name, dsn: dsn)
    }

    /// The token of a runner.
    /// - Throws: `errSecParam` for an id or seed of the wrong length, a bad team name or a
    ///   DSN longer than 65,535 bytes.
    package static func encode(keychainID: [UInt8], seed: borrowing SecureBytes, teamName: String, dsn: String) throws -> String {
        try TeamName.validate(teamName)
        guard keychainID.count == 32, seed.count == MemberKeys.seedBytes, !dsn.isEmpty, dsn.utf8.count <= Int(UInt16.max) else {
            throw KeychainError(errSecParam, "a runner token needs a 32-byte keychain id and seed and a DSN of 1 to 65535 bytes")
        }
        try Sodium.ensureReady()
        var raw: [UInt8] = [version] + keychainID
        defer { Sodium.wipe(&raw) }
        seed.withUnsafeBytes { raw.append(contentsOf: $0) }
        for text in [teamName, dsn] {
            let utf8 = Array(text.utf8)
            raw.append(UInt8(utf8.count >> 8))
            raw.append(UInt8(truncatingIfNeeded: utf8.count))
            raw.append(contentsOf: utf8)
        }
        let variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING
        var out = [CChar](repeating: 0, count: sodium_base64_encoded_len(raw.count, variant))
        defer { out.withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } } }
        _ = out.withUnsafeMutableBufferPointer { o in
            raw.withUnsafeBufferPointer { r in
                if let base = o.baseAddress { _ = sodium_bin2base64(base, o.count, r.baseAddress, r.count, variant) }
            }
        }
        let encoded = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefix + encoded
    }
}

/// Trimming a token read from a file or the environment.
extension String {
    /// The string without leading and trailing ASCII spaces, tabs and line ends (a token
    /// read from a file usually ends with a newline).
    fileprivate var trimmingASCIIWhitespace: String {
        let utf8 = Array(self.utf8)
        let space: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        guard let first = utf8.firstIndex(where: { !space($0) }), let last = utf8.lastIndex(where: { !space($0) }) else { return "" }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
