import KeychainCore
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One SSH key kept in a keychain, as a listing sees it (never its private half).
public struct StoredSSHKey: Sendable, Equatable {
    /// The item's label: the name `kc ssh` commands take and the comment `ssh-add -L` shows.
    public var name: String
    /// The public key blob.
    public var publicBlob: [UInt8]
    /// Whether every signature asks for the user's presence (`--user-presence`).
    public var requiresPresence: Bool
}

/// How SSH keys are kept as kc key items (docs/ssh.md, "Keys in the keychain"):
///
/// | attribute | value |
/// |---|---|
/// | kSecClass | kSecClassKey |
/// | kSecAttrLabel | NAME (unique among the keychain's SSH keys) |
/// | kSecAttrApplicationTag | `ssh:` and the key's SHA-256 fingerprint (`ssh:SHA256:…`): marks the item as an SSH key |
/// | kSecAttrApplicationLabel | the public key blob (so a listing needs no secret, and the agent finds a key by its blob) |
/// | kSecAttrKeyClass, kSecAttrKeyType, kSecAttrKeySizeInBits | private; Ed25519 / EC / RSA; the size |
/// | kSecAttrCanSign | true |
/// | kcAttrAccessControlFlags | `.userPresence` for `--user-presence`, as `kc add --user-presence` |
/// | kSecValueData | the private wire form (`SSHPrivateKey.wire`), sealed like every secret |
public enum SSHKeyItems {
    /// The application tag's prefix that marks an SSH key item.
    public static let tagPrefix = "ssh:"

    /// The query that adds `key` as `name`.
    public static func addQuery(_ key: SSHPrivateKey, name: String, userPresence: Bool) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass: kSecClassKey,
            kSecAttrLabel: name,
            kSecAttrApplicationTag: tagPrefix + SSHPublicKey.fingerprint(key.publicBlob),
            kSecAttrApplicationLabel: Data(key.publicBlob),
            kSecAttrKeyClass: Int(kSecAttrKeyClassPrivate) ?? 1,
            kSecAttrKeyType: key.type.keychainKeyType,
            kSecAttrKeySizeInBits: bits(of: key),
            kSecAttrCanSign: true,
            kSecValueData: Data(key.wire)
        ]
        if userPresence { query[kcAttrAccessControlFlags] = Int(AccessControlFlags.userPresence) }
        return query
    }

    /// Checks that `name` can be an SSH key's name: 1-255 bytes of UTF-8 with no control
    /// character (it is printed as the comment of `ssh-add -L`). - Throws: errSecParam.
    public static func checkName(_ name: String) throws {
        guard (1...255).contains(name.utf8.count), !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw KeychainError(errSecParam, "an SSH key's name is 1 to 255 characters, none of them a control character")
        }
    }

    /// The key size recorded for `key` (the modulus size for RSA).
    static func bits(of key: SSHPrivateKey) -> Int {
        switch key.type {
        case .ed25519: return 256
        case .ecdsaP256: return 256
        case .ecdsaP384: return 384
        case .ecdsaP521: return 521
        case .rsa:
            var r = SSHWireReader(key.publicBlob)
            _ = try? r.string()
            _ = try? r.string()
            guard let n = try? r.positiveMPInt(), let first = n.first else { return 0 }
            return n.count * 8 - first.leadingZeroBitCount
        }
    }

    /// Every SSH key in the session's keychain, in the order they were added. Reads
    /// attributes only: no secret is decrypted or released, so keys that require user
    /// presence are listed without asking.
    public static func list(_ session: KeychainSession) throws -> [StoredSSHKey] {
        var keys: [StoredSSHKey] = []
        try session.forEachPage([kSecClass: kSecClassKey, kSecReturnAttributes: true, kSecMatchLimit: kSecMatchLimitAll]) { page in
            for case let attributes as [String: Any] in page {
                if let key = stored(attributes) { keys.append(key) }
            }
        }
        return keys
    }

    /// The SSH key item an attribute dictionary describes, or nil when it is another item.
    static func stored(_ attributes: [String: Any]) -> StoredSSHKey? {
        guard let tag = text(attributes[kSecAttrApplicationTag]), tag.hasPrefix(tagPrefix),
            let blob = bytes(attributes[kSecAttrApplicationLabel]), !blob.isEmpty
        else { return nil }
        let name = text(attributes[kSecAttrLabel]) ?? ""
        let flags = (attributes[kcAttrAccessControlFlags] as? Int).map(Int64.init) ?? (attributes[kcAttrAccessControlFlags] as? Int64) ?? 0
        return StoredSSHKey(name: name, publicBlob: blob, requiresPresence: flags & AccessControlFlags.userPresence != 0)
    }

    /// The SSH key named `name`. - Throws: errSecItemNotFound, naming it, with a hint.
    public static func named(_ name: String, in session: KeychainSession) throws -> StoredSSHKey {
        guard let key = try list(session).first(where: { $0.name == name }) else {
            throw KeychainError(errSecItemNotFound, "no SSH key named \(name) in \(session.address)", hint: "`kc ssh list` shows the keys kept there")
        }
        return key
    }

    /// The private wire form of the key whose public blob is `blob`, or nil when the
    /// keychain has no such SSH key. The caller wipes it.
    /// - Throws: what the session throws (locked, user presence not given…); errSecDecode
    ///   when the item's secret is not a well-formed key whose public half is `blob`.
    public static func privateKey(for blob: [UInt8], in session: KeychainSession) throws -> [UInt8]? {
        let query: [String: Any] = [
            kSecClass: kSecClassKey,
            kSecAttrApplicationTag: tagPrefix + SSHPublicKey.fingerprint(blob),
            kSecAttrApplicationLabel: Data(blob),
            kSecReturnData: true
        ]
        var wire: [UInt8]
        do {
            var value = try session.copyMatching(query)
            guard let found = Self.takeSecret(&value) else { return nil }
            wire = found
        } catch let error as KeychainError where error.status == errSecItemNotFound {
            return nil
        }
        // An item whose secret is not the key its attributes name (written by another
        // program, or by a team member) is not used to sign for that key.
        do {
            var key = try SSHPrivateKey(wire: wire, checkingHalves: false)
            defer { key.wipe() }
            guard key.publicBlob == blob else {
                throw KeychainError(errSecDecode, "the SSH key item \(SSHPublicKey.fingerprint(blob)) in \(session.address) holds another key")
            }
        } catch {
            Sodium.wipe(&wire)
            throw error
        }
        return wire
    }

    /// The secret bytes of a returned value, its own copy (a `Data`) overwritten once it is
    /// the only owner, so no copy of the private key stays in the process's memory.
    static func takeSecret(_ value: inout Any?) -> [UInt8]? {
        switch value {
        case .some(let found as Data):
            var data = found
            value = nil   // `data` is the buffer's only owner now: overwritten, not copied
            let out = Array(data)
            data.withUnsafeMutableBytes { Sodium.wipe($0) }
            return out
        case .some(var found as [UInt8]):
            value = nil
            defer { Sodium.wipe(&found) }
            return Array(found)
        default:
            return nil
        }
    }

    /// Bytes from an attribute or value as the agent or the keychain returns it.
    static func bytes(_ value: Any?) -> [UInt8]? {
        switch value {
        case let data as Data: Array(data)
        case let bytes as [UInt8]: bytes
        case let text as String: Array(text.utf8)
        default: nil
        }
    }

    /// Text from an attribute kept as given (a blob: string or data).
    static func text(_ value: Any?) -> String? {
        switch value {
        case let text as String: text
        case let data as Data: String(validating: Array(data), as: UTF8.self)
        case let bytes as [UInt8]: String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }
}
