import KeychainCore

/// How an admin hands the team's master key (MK) of one key generation to one member, so
/// that a server that stores the wraps can neither read them nor substitute its own
/// (`docs/format.md` §9.4):
///
///     sealed    = crypto_box_seal("kc team mk v1" ‖ keychain_id[32] ‖ u32 key_gen ‖
///                                 member_id[16] ‖ MK[32], member's X25519 key)
///     signature = Ed25519 by an admin of ("kc team wrap v1" ‖ keychain_id ‖ u32 key_gen ‖
///                                 member_id ‖ BLAKE2b-256(sealed) ‖ mk_commit)
///     mk_commit = BLAKE2b-256(key = MK, "kc team mk commit v1" ‖ keychain_id ‖ u32 key_gen)
///
/// `mk_commit` is carried in the admin-signed key generation record, so every member opens
/// the same MK: a server that seals a key of its own to a member fails the signature, and
/// one that replays a signed wrap of another keychain, generation or member fails the
/// context check.
///
///     let commit = MasterKeyDelivery.commitment(masterKey: mk, keychainID: id, keyGeneration: 2)
///     let wrap = try MasterKeyDelivery.wrap(masterKey: mk, keychainID: id, keyGeneration: 2,
///                                           memberID: bob.id, memberBoxKey: bob.box, admin: me,
///                                           commitment: commit)
///     let opened = try MasterKeyDelivery.open(sealed: wrap.sealed, signature: wrap.signature,
///                                             keychainID: id, keyGeneration: 2, member: bobKeys,
///                                             adminSignKeys: admins, commitment: commit)
package enum MasterKeyDelivery {
    /// The context at the start of the sealed plaintext.
    static let sealContext = Array("kc team mk v1".utf8)
    /// The label at the start of the signed message.
    static let wrapLabel = Array("kc team wrap v1".utf8)
    /// The label at the start of the committed message.
    static let commitLabel = Array("kc team mk commit v1".utf8)
    /// The length of a keychain id.
    package static let keychainIDBytes = 32
    /// The length of a master key.
    package static let masterKeyBytes = 32
    /// The length of the sealed plaintext.
    static let plaintextBytes = sealContext.count + keychainIDBytes + 4 + MemberKeys.memberIDBytes + masterKeyBytes

    // MARK: Commitment

    /// `mk_commit`: BLAKE2b-256 keyed with the MK of `"kc team mk commit v1" ‖ keychain_id ‖
    /// u32 key_gen`.
    package static func commitment(masterKey: SymmetricKey, keychainID: [UInt8], keyGeneration: UInt32) -> [UInt8] {
        masterKey.withBytes { commitment(key: $0, keychainID: keychainID, keyGeneration: keyGeneration) }
    }

    /// `mk_commit` of an MK held as secure bytes.
    package static func commitment(masterKey: borrowing SecureBytes, keychainID: [UInt8], keyGeneration: UInt32) -> [UInt8] {
        masterKey.withUnsafeBytes { commitment(key: $0, keychainID: keychainID, keyGeneration: keyGeneration) }
    }

    /// `mk_commit` under raw key bytes.
    private static func commitment(key: UnsafeRawBufferPointer, keychainID: [UInt8], keyGeneration: UInt32) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.raw(commitLabel)
        w.raw(keychainID)
        w.u32(keyGeneration)
        return Hashing.blake2b(w.bytes, key: key, length: 32)
    }

    // MARK: Signed message

    /// What the admin signs: `"kc team wrap v1" ‖ keychain_id ‖ u32 key_gen ‖ member_id ‖
    /// BLAKE2b-256(sealed) ‖ mk_commit`.
    package static func signedMessage(
        keychainID: [UInt8], keyGeneration: UInt32, memberID: [UInt8],
        sealed: [UInt8], commitment: [UInt8]
    ) -> [UInt8] {
        var w = ByteWriter(capacity: 160)
        w.raw(wrapLabel)
        w.raw(keychainID)
        w.u32(keyGeneration)
        w.raw(memberID)
        w.raw(Hashing.blake2b(sealed, length: 32))
        w.raw(commitment)
        return w.bytes
    }

    // MARK: Wrap

    /// Seals the MK to a member and signs the wrap as `admin`.
    /// - Throws: `errSecParam` for ids, keys or an MK of the wrong length, or a commitment
    ///   that is not the MK's (a bug in the caller: nothing is sealed then).
    package static func wrap(
        masterKey: SymmetricKey, keychainID: [UInt8], keyGeneration: UInt32, memberID: [UInt8],
        memberBoxKey: [UInt8], admin: MemberKeys, commitment: [UInt8]
    ) throws -> (sealed: [UInt8], signature: [UInt8]) {
        try wrap(
            masterKey: masterKey.bytes, keychainID: keychainID, keyGeneration: keyGeneration, memberID: memberID,
            memberBoxKey: memberBoxKey, admin: admin, commitment: commitment)
    }

    /// Seals an MK held as secure bytes (see the `SymmetricKey` form).
    package static func wrap(
        masterKey: borrowing SecureBytes, keychainID: [UInt8], keyGeneration: UInt32, memberID: [UInt8],
        memberBoxKey: [UInt8], admin: MemberKeys, commitment: [UInt8]
    ) throws -> (sealed: [UInt8], signature: [UInt8]) {
        try checkLengths(keychainID: keychainID, memberID: memberID)
        guard masterKey.count == masterKeyBytes else {
            throw KeychainError(errSecParam, "a master key has \(masterKeyBytes) bytes, not \(masterKey.count)")
        }
        let expected = self.commitment(masterKey: masterKey, keychainID: keychainID, keyGeneration: keyGeneration)
        guard expected == commitment else {
            throw KeychainError(errSecParam, "the master key commitment given is not this master key's")
        }
        let plaintext = try SecureBytes(count: plaintextBytes)
        plaintext.withUnsafeMutableBytes { out in
            var w = ByteWriter(capacity: sealContext.count + keychainIDBytes + 4 + MemberKeys.memberIDBytes)
            w.raw(sealContext)
            w.raw(keychainID)
            w.u32(keyGeneration)
            w.raw(memberID)
            w.bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            masterKey.withUnsafeBytes { mk in
                (out.baseAddress! + w.bytes.count).copyMemory(from: mk.baseAddress!, byteCount: masterKeyBytes)
            }
        }
        let sealed = try MemberKeys.seal(plaintext, to: memberBoxKey)
        let message = signedMessage(
            keychainID: keychainID, keyGeneration: keyGeneration, memberID: memberID,
            sealed: sealed, commitment: commitment)
        return (sealed, admin.sign(message))
    }

    // MARK: Open

    /// Opens the MK wrapped for `member`, checking in this order: an admin valid at this key
    /// generation signed it; it opens with this member's key; it names this keychain, key
    /// generation and member; the MK inside is the one `commitment` (from the admin-signed
    /// key generation record) commits to.
    ///
    /// - Returns: the 32-byte MK in guarded memory.
    /// - Throws: `errSecDecode`, with a message that says what the server did, when any
    ///   check fails; `errSecParam` for ids of the wrong length.
    package static func open(
        sealed: [UInt8], signature: [UInt8], keychainID: [UInt8], keyGeneration: UInt32,
        member: MemberKeys, adminSignKeys: [[UInt8]], commitment: [UInt8]
    ) throws -> SecureBytes {
        try checkLengths(keychainID: keychainID, memberID: member.memberID)
        let message = signedMessage(
            keychainID: keychainID, keyGeneration: keyGeneration, memberID: member.memberID,
            sealed: sealed, commitment: commitment)
        guard adminSignKeys.contains(where: { MemberKeys.verify(signature: signature, message: message, publicKey: $0) }) else {
            throw KeychainError(
                errSecDecode,
                "the master key wrap for you (key generation \(keyGeneration)) is not signed by an admin of the keychain: the server substituted it",
                hint: "do not use this keychain from this device until an admin has checked the database")
        }
        let plaintext = try openBox(sealed, member: member, keyGeneration: keyGeneration)
        var w = ByteWriter(capacity: 96)
        w.raw(sealContext)
        w.raw(keychainID)
        w.u32(keyGeneration)
        w.raw(member.memberID)
        let header = w.bytes
        let headerMatches = plaintext.count == plaintextBytes && plaintext.withUnsafeBytes { Array($0.prefix(header.count)) == header }
        guard headerMatches else {
            throw KeychainError(
                errSecDecode,
                "the master key wrap for you (key generation \(keyGeneration)) was made for another keychain, key generation or member: the server replayed it")
        }
        let masterKey = try plaintext.withUnsafeBytes {
            try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[header.count...]), guarded: true)
        }
        let opened = self.commitment(masterKey: masterKey, keychainID: keychainID, keyGeneration: keyGeneration)
        guard Sodium.constantTimeEqual(opened, commitment) else {
            throw KeychainError(
                errSecDecode,
                "the master key you were sent (key generation \(keyGeneration)) is not the one the admins committed to: the server substituted it",
                hint: "do not use this keychain from this device until an admin has checked the database")
        }
        return masterKey
    }

    /// Opens the sealed box, naming a failure as a wrap sealed to another key.
    /// - Throws: `errSecDecode`.
    private static func openBox(_ sealed: [UInt8], member: MemberKeys, keyGeneration: UInt32) throws -> SecureBytes {
        do {
            return try member.open(sealed: sealed)
        } catch {
            throw KeychainError(
                errSecDecode,
                "the master key wrap for you (key generation \(keyGeneration)) does not open with this device's key: it was sealed to another member's key",
                hint: "ask an admin to wrap the master key to you again (remove and add this device)")
        }
    }

    /// Refuses ids of the wrong length. - Throws: `errSecParam`.
    private static func checkLengths(keychainID: [UInt8], memberID: [UInt8]) throws {
        guard keychainID.count == keychainIDBytes else {
            throw KeychainError(errSecParam, "a keychain id has \(keychainIDBytes) bytes, not \(keychainID.count)")
        }
        guard memberID.count == MemberKeys.memberIDBytes else {
            throw KeychainError(errSecParam, "a member id has \(MemberKeys.memberIDBytes) bytes, not \(memberID.count)")
        }
    }
}
