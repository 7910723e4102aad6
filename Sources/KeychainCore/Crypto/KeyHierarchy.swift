internal import CSodium

/// The keys of one unlocked keychain (`docs/format.md` §2):
///
///     MK --crypto_kdf("kckeys01", id)--> K_meta(1), K_index(2), K_wrap(3), K_header(4), K_set(5),
///                                        K_afu(6)
///     K_index --crypto_kdf("kcblind1", class4CC << 32 | attr4CC)--> one blind-index key each
///     K_afu --crypto_kdf("kcclass1", id)--> K_afu_meta(1), K_afu_wrap(2)
///
/// The when-unlocked class key is the pair (K_meta, K_wrap); after-first-unlock's is
/// K_afu. A locked keychain that keeps after-first-unlock items readable holds the
/// hierarchy `afterFirstUnlockOnly()` answers: no master key, no when-unlocked class key.
///
/// Immutable and reference-counted: `lock` drops the keychain's reference; an operation
/// still running keeps its own until it ends, and the last release wipes every key.
package final class KeyHierarchy: @unchecked Sendable {
    static let subkeyContext = "kckeys01"
    static let blindContext = "kcblind1"
    static let classContext = "kcclass1"

    enum Subkey: UInt64 { case meta = 1, index = 2, wrap = 3, header = 4, set = 5, afterFirstUnlock = 6 }

    /// The keys of one protection class: its data keys' wrap and its metadata's seal.
    struct ClassKeys {
        /// Seals and opens the metadata of the class's items.
        let meta: SymmetricKey
        /// Wraps and unwraps the data keys of the class's items.
        let wrap: SymmetricKey
    }

    /// The master key itself (needed to re-wrap it under a new password); nil in a hierarchy
    /// kept for after-first-unlock items only.
    let masterKey: SymmetricKey?
    /// The when-unlocked class key (K_meta, K_wrap); nil once locked.
    let whenUnlocked: ClassKeys?
    /// The after-first-unlock class key's two subkeys.
    let afterFirstUnlock: ClassKeys
    let header: SymmetricKey
    let set: SymmetricKey
    private let blindKeys: [UInt64: SymmetricKey]
    /// The keychain these keys belong to and the key generation they were made for.
    let keychainID: [UInt8]
    package let keyGeneration: UInt32

    /// Derives every subkey from a master key.
    package init(master: SymmetricKey, keychainID: [UInt8], keyGeneration: UInt32, blindKeyIDs: [UInt64]) throws {
        masterKey = master
        self.keychainID = keychainID
        self.keyGeneration = keyGeneration
        whenUnlocked = ClassKeys(
            meta: try Self.derive(from: master, id: Subkey.meta.rawValue, context: Self.subkeyContext),
            wrap: try Self.derive(from: master, id: Subkey.wrap.rawValue, context: Self.subkeyContext))
        let afu = try Self.derive(from: master, id: Subkey.afterFirstUnlock.rawValue, context: Self.subkeyContext)
        afterFirstUnlock = ClassKeys(
            meta: try Self.derive(from: afu, id: 1, context: Self.classContext),
            wrap: try Self.derive(from: afu, id: 2, context: Self.classContext))
        let index = try Self.derive(from: master, id: Subkey.index.rawValue, context: Self.subkeyContext)
        header = try Self.derive(from: master, id: Subkey.header.rawValue, context: Self.subkeyContext)
        set = try Self.derive(from: master, id: Subkey.set.rawValue, context: Self.subkeyContext)
        var blind: [UInt64: SymmetricKey] = [:]
        for id in blindKeyIDs where blind[id] == nil {
            blind[id] = try Self.derive(from: index, id: id, context: Self.blindContext)
        }
        blindKeys = blind
    }

    /// A copy without the master key and the when-unlocked class key.
    private init(reducing full: KeyHierarchy) {
        masterKey = nil
        whenUnlocked = nil
        afterFirstUnlock = full.afterFirstUnlock
        header = full.header
        set = full.set
        blindKeys = full.blindKeys
        keychainID = full.keychainID
        keyGeneration = full.keyGeneration
    }

    /// What a locked keychain keeps so that after-first-unlock items stay readable
    /// (`docs/security.md`, "A locked agent"): that class key, the blind-index keys (to find
    /// the items), K_header and K_set (to keep checking the header and every row read).
    /// The master key and the when-unlocked class key are left to be wiped.
    func afterFirstUnlockOnly() -> KeyHierarchy { KeyHierarchy(reducing: self) }

    /// Whether this hierarchy holds every key (the keychain is unlocked).
    var isComplete: Bool { masterKey != nil && whenUnlocked != nil }

    /// The master key. - Throws: errSecInteractionNotAllowed when the keychain is locked.
    package func master() throws -> SymmetricKey {
        guard let masterKey else { throw Self.lockedError }
        return masterKey
    }

    /// The class key that protects items of `protection`.
    /// - Throws: errSecInteractionNotAllowed when that class's key is not held (a
    ///   when-unlocked item of a locked keychain).
    func classKeys(_ protection: ProtectionClass) throws -> ClassKeys {
        switch protection {
        case .afterFirstUnlock: return afterFirstUnlock
        case .whenUnlocked:
            guard let whenUnlocked else { throw Self.lockedError }
            return whenUnlocked
        }
    }

    /// The error of an operation that needs a key a locked keychain no longer holds: the
    /// agent answers it as "not held", so the client asks for the password as for any
    /// locked keychain.
    static var lockedError: KeychainError {
        KeychainError(errSecInteractionNotAllowed, "the keychain is locked", hint: "unlock it again")
    }

    /// A fresh random master key.
    package static func newMasterKey() throws -> SymmetricKey {
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

extension KeyHierarchy {
    /// Zeroes every key of this hierarchy in place (`KeyRevocation`): whoever still holds
    /// a reference to it holds zeros from now on.
    func wipe() {
        var keys = [header, set, afterFirstUnlock.meta, afterFirstUnlock.wrap] + Array(blindKeys.values)
        if let masterKey { keys.append(masterKey) }
        if let whenUnlocked { keys += [whenUnlocked.meta, whenUnlocked.wrap] }
        for key in keys { key.wipe() }
    }
}
