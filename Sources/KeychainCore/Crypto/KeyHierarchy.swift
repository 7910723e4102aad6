internal import CSodium

/// The keys of one unlocked keychain (`docs/format.md` §2):
///
///     MK --crypto_kdf("kckeys01", id)--> K_meta(1), K_index(2), K_wrap(3), K_header(4), K_set(5)
///     K_index --crypto_kdf("kcblind1", class4CC << 32 | attr4CC)--> one blind-index key each
///
/// Immutable and reference-counted: `lock` drops the keychain's reference; an operation
/// still running keeps its own until it ends, and the last release wipes every key.
package final class KeyHierarchy: @unchecked Sendable {
    static let subkeyContext = "kckeys01"
    static let blindContext = "kcblind1"

    enum Subkey: UInt64 { case meta = 1, index = 2, wrap = 3, header = 4, set = 5 }

    /// The master key itself (needed to re-wrap it under a new password).
    let master: SymmetricKey
    let meta: SymmetricKey
    let wrap: SymmetricKey
    let header: SymmetricKey
    let set: SymmetricKey
    private let blindKeys: [UInt64: SymmetricKey]
    /// The keychain these keys belong to and the key generation they were made for.
    let keychainID: [UInt8]
    let keyGeneration: UInt32

    /// Derives every subkey from a master key.
    package init(master: SymmetricKey, keychainID: [UInt8], keyGeneration: UInt32, blindKeyIDs: [UInt64]) throws {
        self.master = master
        self.keychainID = keychainID
        self.keyGeneration = keyGeneration
        meta = try Self.derive(from: master, id: Subkey.meta.rawValue, context: Self.subkeyContext)
        let index = try Self.derive(from: master, id: Subkey.index.rawValue, context: Self.subkeyContext)
        wrap = try Self.derive(from: master, id: Subkey.wrap.rawValue, context: Self.subkeyContext)
        header = try Self.derive(from: master, id: Subkey.header.rawValue, context: Self.subkeyContext)
        set = try Self.derive(from: master, id: Subkey.set.rawValue, context: Self.subkeyContext)
        var blind: [UInt64: SymmetricKey] = [:]
        for id in blindKeyIDs where blind[id] == nil {
            blind[id] = try Self.derive(from: index, id: id, context: Self.blindContext)
        }
        blindKeys = blind
    }

    /// A fresh random master key.
    static func newMasterKey() throws -> SymmetricKey {
        try Sodium.ensureReady()
        let mk = try SecureBytes(count: 32, guarded: true)
        mk.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, 32) }
        return SymmetricKey(mk)
    }

    /// The blind-index key with this id.
    func blindKey(_ id: UInt64) throws -> SymmetricKey {
        guard let key = blindKeys[id] else {
            throw KeychainError(errSecInternalError, "no blind-index key \(id)")
        }
        return key
    }

    /// `crypto_kdf_derive_from_key` into guarded memory.
    static func derive(from parent: SymmetricKey, id: UInt64, context: String) throws -> SymmetricKey {
        let ctx = Array(context.utf8)
        precondition(ctx.count == 8, "crypto_kdf contexts are exactly 8 bytes")
        let sub = try SecureBytes(count: 32, guarded: true)
        let rc = sub.withUnsafeMutableBytes { out in
            parent.withBytes { key in
                ctx.withUnsafeBytes { c in
                    crypto_kdf_derive_from_key(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, id,
                        c.baseAddress!.assumingMemoryBound(to: CChar.self),
                        key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard rc == 0 else { throw KeychainError(errSecInternalError, "key derivation failed") }
        return SymmetricKey(sub)
    }

    /// A fresh random 32-byte data key (DEK) in scratch memory.
    static func newDataKey() throws -> SymmetricKey {
        let dek = try SecureBytes(count: 32)
        dek.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, 32) }
        return SymmetricKey(dek)
    }
}
