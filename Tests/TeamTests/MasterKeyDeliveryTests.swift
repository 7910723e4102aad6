import Testing
import KeychainCore
import TeamCore

/// Master-key delivery (`docs/format.md` §9.4) against a hostile server: each way the server
/// can substitute, replay or re-address a wrap is refused with a message that says so, and
/// an honest wrap opens to the admins' MK.
@Suite struct MasterKeyDeliveryTests {
    /// A keychain with one admin and one member at key generation 3, and a wrap of its MK.
    struct Team {
        /// The keychain id.
        let keychainID = Sodium.randomBytes(32)
        /// The key generation of the wrap.
        let generation: UInt32 = 3
        /// The admin who wraps.
        let admin: MemberKeys
        /// The member the MK is wrapped to.
        let member: MemberKeys
        /// The MK.
        let masterKey: SymmetricKey
        /// The MK's commitment, as the key generation record carries it.
        let commitment: [UInt8]
        /// The wrap's sealed box.
        let sealed: [UInt8]
        /// The admin's signature of the wrap.
        let signature: [UInt8]

        /// A new team and wrap.
        init() throws {
            admin = try MemberKeys.generate()
            member = try MemberKeys.generate()
            masterKey = SymmetricKey(try SecureBytes(copying: Sodium.randomBytes(32), guarded: true))
            commitment = MasterKeyDelivery.commitment(masterKey: masterKey, keychainID: keychainID, keyGeneration: generation)
            (sealed, signature) = try MasterKeyDelivery.wrap(
                masterKey: masterKey, keychainID: keychainID, keyGeneration: generation,
                memberID: member.memberID, memberBoxKey: member.boxPublicKey,
                admin: admin, commitment: commitment)
        }

        /// Opens a wrap as `member` would, with the admins and commitment of the record.
        func open(
            sealed: [UInt8]? = nil, signature: [UInt8]? = nil, keychainID: [UInt8]? = nil, generation: UInt32? = nil,
            as who: MemberKeys? = nil, admins: [[UInt8]]? = nil, commitment: [UInt8]? = nil
        ) throws -> [UInt8] {
            try MasterKeyDelivery.open(
                sealed: sealed ?? self.sealed, signature: signature ?? self.signature,
                keychainID: keychainID ?? self.keychainID, keyGeneration: generation ?? self.generation,
                member: who ?? member, adminSignKeys: admins ?? [admin.signPublicKey],
                commitment: commitment ?? self.commitment
            ).withUnsafeBytes { Array($0) }
        }

        /// The MK's bytes.
        var masterKeyBytes: [UInt8] { masterKey.bytes.withUnsafeBytes { Array($0) } }
    }

    /// The message of a wrap no admin signed (key generation 3).
    static let unsigned = "the master key wrap for you (key generation 3) is not signed by an admin of the keychain: the server substituted it"
    /// The message of an MK other than the committed one (key generation 3).
    static let notCommitted = "the master key you were sent (key generation 3) is not the one the admins committed to: the server substituted it"

    /// The error a call throws (nil when it does not throw).
    static func failure(_ body: () throws -> Any) -> KeychainError? {
        do { _ = try body(); return nil } catch let e as KeychainError { return e } catch { return nil }
    }

    @Test func anHonestWrapOpensToTheAdminsMasterKey() throws {
        let team = try Team()
        #expect(try team.open() == team.masterKeyBytes)
        // Any admin valid at the generation may have signed it.
        let other = try MemberKeys.generate()
        #expect(try team.open(admins: [other.signPublicKey, team.admin.signPublicKey]) == team.masterKeyBytes)
        #expect(team.sealed.count == 13 + 32 + 4 + 16 + 32 + 48)
    }

    @Test func theCommitmentDependsOnKeyKeychainAndGeneration() throws {
        let team = try Team()
        let otherKey = SymmetricKey(try SecureBytes(copying: Sodium.randomBytes(32)))
        #expect(MasterKeyDelivery.commitment(masterKey: team.masterKey.bytes, keychainID: team.keychainID, keyGeneration: 3) == team.commitment)
        #expect(MasterKeyDelivery.commitment(masterKey: otherKey, keychainID: team.keychainID, keyGeneration: 3) != team.commitment)
        #expect(MasterKeyDelivery.commitment(masterKey: team.masterKey, keychainID: Sodium.randomBytes(32), keyGeneration: 3) != team.commitment)
        #expect(MasterKeyDelivery.commitment(masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 4) != team.commitment)
    }

    /// The server seals an MK of its own to the member and signs with a key of its own (or
    /// signs nothing): the member's list of admins does not hold that key.
    @Test func aWrapTheServerMadeIsNotSignedByAnAdmin() throws {
        let team = try Team()
        let server = try MemberKeys.generate()
        let serverKey = SymmetricKey(try SecureBytes(copying: Sodium.randomBytes(32)))
        let serverCommit = MasterKeyDelivery.commitment(masterKey: serverKey, keychainID: team.keychainID, keyGeneration: 3)
        let forged = try MasterKeyDelivery.wrap(
            masterKey: serverKey, keychainID: team.keychainID, keyGeneration: 3,
            memberID: team.member.memberID, memberBoxKey: team.member.boxPublicKey,
            admin: server, commitment: serverCommit)
        #expect(
            Self.failure { try team.open(sealed: forged.sealed, signature: forged.signature) }
                == KeychainError(errSecDecode, Self.unsigned, hint: "do not use this keychain from this device until an admin has checked the database"))
        // Even with the server's own commitment substituted in the record too.
        #expect(Self.failure { try team.open(sealed: forged.sealed, signature: forged.signature, commitment: serverCommit) }?.message == Self.unsigned)
        // The admin's real signature does not cover the server's box.
        #expect(Self.failure { try team.open(sealed: forged.sealed) }?.message == Self.unsigned)
        // No admins at all, or a signature of the wrong length.
        #expect(Self.failure { try team.open(admins: []) }?.message == Self.unsigned)
        #expect(Self.failure { try team.open(signature: Array(team.signature.prefix(63))) }?.message == Self.unsigned)
        // A writer or reader (not an admin at this generation) signed it.
        #expect(Self.failure { try team.open(admins: [team.member.signPublicKey]) }?.message == Self.unsigned)
    }

    /// The server hands the member the wrap another member got, or one of another key
    /// generation or keychain: the signature names the member, generation and keychain.
    @Test func aReplayedWrapIsRefused() throws {
        let team = try Team()
        let bob = try MemberKeys.generate()
        let bobs = try MasterKeyDelivery.wrap(
            masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 3,
            memberID: bob.memberID, memberBoxKey: bob.boxPublicKey, admin: team.admin, commitment: team.commitment)
        #expect(Self.failure { try team.open(sealed: bobs.sealed, signature: bobs.signature) }?.message == Self.unsigned)
        #expect(
            Self.failure { try team.open(generation: 2) }?.message
                == "the master key wrap for you (key generation 2) is not signed by an admin of the keychain: the server substituted it")
        #expect(Self.failure { try team.open(keychainID: Sodium.randomBytes(32)) }?.message == Self.unsigned)
        #expect(Self.failure { try team.open(as: bob) }?.message == Self.unsigned)
    }

    /// A signed wrap whose box is for someone else (an admin sealed to the key the server
    /// showed it): it does not open, and says so.
    @Test func aSignedWrapSealedToAnotherKeyDoesNotOpen() throws {
        let team = try Team()
        let server = try MemberKeys.generate()
        let misdirected = try MasterKeyDelivery.wrap(
            masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 3,
            memberID: team.member.memberID, memberBoxKey: server.boxPublicKey,
            admin: team.admin, commitment: team.commitment)
        let e = Self.failure { try team.open(sealed: misdirected.sealed, signature: misdirected.signature) }
        #expect(e?.status == errSecDecode)
        #expect(e?.message == "the master key wrap for you (key generation 3) does not open with this device's key: it was sealed to another member's key")
    }

    /// An admin's signature over a box whose inside names another member or generation (an
    /// admin's device that was made to wrap the wrong thing): refused after opening.
    @Test func aBoxNamingAnotherKeychainGenerationOrMemberIsRefused() throws {
        let team = try Team()
        let other = try MemberKeys.generate()
        // Built with another member id inside, then signed as if for `member`.
        let inner = try MasterKeyDelivery.wrap(
            masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 3,
            memberID: other.memberID, memberBoxKey: team.member.boxPublicKey,
            admin: team.admin, commitment: team.commitment)
        let message = MasterKeyDelivery.signedMessage(
            keychainID: team.keychainID, keyGeneration: 3, memberID: team.member.memberID,
            sealed: inner.sealed, commitment: team.commitment)
        let e = Self.failure { try team.open(sealed: inner.sealed, signature: team.admin.sign(message)) }
        #expect(e?.status == errSecDecode)
        #expect(e?.message == "the master key wrap for you (key generation 3) was made for another keychain, key generation or member: the server replayed it")
    }

    /// The server substitutes the MK inside a wrap an admin signed: impossible without the
    /// admin's key, so the case to catch is a commitment that does not match what was
    /// sealed — a signed wrap of another MK than the one the key generation record commits to.
    @Test func aMasterKeyOtherThanTheCommittedOneIsRefused() throws {
        let team = try Team()
        let otherKey = SymmetricKey(try SecureBytes(copying: Sodium.randomBytes(32)))
        let otherCommit = MasterKeyDelivery.commitment(masterKey: otherKey, keychainID: team.keychainID, keyGeneration: 3)
        let wrap = try MasterKeyDelivery.wrap(
            masterKey: otherKey, keychainID: team.keychainID, keyGeneration: 3,
            memberID: team.member.memberID, memberBoxKey: team.member.boxPublicKey,
            admin: team.admin, commitment: otherCommit)
        // Signed over the record's commitment, but the box holds another MK.
        let message = MasterKeyDelivery.signedMessage(
            keychainID: team.keychainID, keyGeneration: 3, memberID: team.member.memberID,
            sealed: wrap.sealed, commitment: team.commitment)
        let e = Self.failure { try team.open(sealed: wrap.sealed, signature: team.admin.sign(message)) }
        #expect(e == KeychainError(errSecDecode, Self.notCommitted, hint: "do not use this keychain from this device until an admin has checked the database"))
        // And the honest wrap checked against a commitment the server altered in transit fails
        // the signature first.
        #expect(Self.failure { try team.open(commitment: otherCommit) }?.message == Self.unsigned)
    }

    @Test func wrappingRefusesACommitmentOfAnotherKeyAndBadLengths() throws {
        let team = try Team()
        #expect(
            Self.failure {
                try MasterKeyDelivery.wrap(
                    masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 4,
                    memberID: team.member.memberID, memberBoxKey: team.member.boxPublicKey, admin: team.admin, commitment: team.commitment)
            }?.status == errSecParam)
        #expect(
            Self.failure {
                try MasterKeyDelivery.wrap(
                    masterKey: team.masterKey, keychainID: Array(team.keychainID.prefix(16)), keyGeneration: 3,
                    memberID: team.member.memberID, memberBoxKey: team.member.boxPublicKey, admin: team.admin, commitment: team.commitment)
            }?.status == errSecParam)
        #expect(
            Self.failure {
                try MasterKeyDelivery.wrap(
                    masterKey: team.masterKey, keychainID: team.keychainID, keyGeneration: 3,
                    memberID: team.member.memberID + [0], memberBoxKey: team.member.boxPublicKey, admin: team.admin, commitment: team.commitment)
            }?.status == errSecParam)
    }
}
