import KeychainCore
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// The `kc team` operations (`docs/team.md`): creating a team keychain, asking to join one,
/// and, for admins, adding devices and runners and removing members.
package enum TeamAdmin {
    /// What `create` made.
    package struct Created {
        /// What other devices give `kc team join`.
        package let join: JoinString
        /// This device's fingerprint.
        package let fingerprint: String
    }

    /// Creates the team keychain `name` on the server at `dsn` with this device as its root
    /// admin `memberName`, and its team file protected by `password`.
    /// - Throws: errSecDuplicateKeychain when this device already has a team of that name.
    package static func create(
        name: String, dsn: String, memberName: String, password: borrowing SecureBytes,
        profile: KDFProfile, insecureTransport: Bool
    ) throws -> Created {
        try TeamName.validate(name)
        try Sodium.ensureReady()
        let path = TeamFile.path(name: name)
        try requireNoTeamFile(path, name: name)
        try PostgresConnection.checkTransport(dsn: dsn, insecureAllowed: insecureTransport)
        let member = try MemberKeys.generate()
        let id = try createOnServer(name: name, dsn: dsn, memberName: memberName, member: member, insecureTransport: insecureTransport)
        try TeamFile.create(
            at: path, teamName: name, keychainID: id, dsn: dsn, memberID: member.memberID,
            insecureTransport: insecureTransport, seed: member.seed, password: password, profile: profile)
        // The join string is shared freely: only the shareable keywords of the DSN.
        return Created(join: JoinString(keychainID: id, dsn: try PostgresConnection.shareable(dsn)), fingerprint: member.fingerprint)
    }

    /// Writes a new team keychain `name` to the server at `dsn` (its schema installed when
    /// missing) with `member` as its root admin `memberName`; answers its id. No local file.
    package static func createOnServer(
        name: String, dsn: String, memberName: String, member: MemberKeys,
        insecureTransport: Bool = false
    ) throws -> [UInt8] {
        let now = TeamAuthority.now
        let root = MemberRecord(name: memberName, role: .admin, boxPublicKey: member.boxPublicKey, signPublicKey: member.signPublicKey)
        let genesis = Genesis(name: name, root: root, created: now)
        let id = genesis.keychainID
        let mk = try KeyHierarchy.newMasterKey()
        let commitment = MasterKeyDelivery.commitment(masterKey: mk, keychainID: id, keyGeneration: 1)
        let roster = try Roster([root])
        var first = LogEntry(
            kind: .roster, generation: 1, previous: id, keyGeneration: 1, signer: root.memberID, time: now,
            roster: roster, masterKeyCommitment: commitment, previousRoster: id, setDigest: LtHash().digest,
            count: 0, rosterDigest: roster.digest)
        first.sign(keychainID: id, with: member)
        let wrap = try MasterKeyDelivery.wrap(
            masterKey: mk, keychainID: id, keyGeneration: 1, memberID: root.memberID,
            memberBoxKey: root.boxPublicKey, admin: member, commitment: commitment)
        let connection = try PostgresConnection(dsn: dsn, insecureTransport: insecureTransport)
        try PostgresSchema.install(connection)
        let store = PostgresItemStore(connection: connection, keychainID: id, label: TeamName.prefix + name)
        let tables = TeamTables(connection: connection, keychainID: id)
        try store.transaction(write: true) {
            try tables.createKeychain(genesis: genesis.encoded, firstEntry: first.encoded, head: first.hash)
            try tables.putMember(root.memberID, record: root.encoded)
            try tables.putWrap(keyGeneration: 1, memberID: root.memberID, sealed: wrap.sealed, signature: wrap.signature)
        }
        return id
    }

    /// Asks to join the team keychain a join string names: checks that the server holds that
    /// very keychain (its genesis hashes to the id), leaves this device's public keys there
    /// for an admin, and writes the team file. Answers the name the team is known by here,
    /// its own name (the genesis's, which its admins know it by) and the fingerprint to tell
    /// the admin.
    /// - Parameter localName: the name to know the team by here (default: the genesis's).
    package static func join(
        _ join: JoinString, memberName: String, localName: String?, password: borrowing SecureBytes,
        profile: KDFProfile, insecureTransport: Bool
    ) throws -> (name: String, teamName: String, fingerprint: String) {
        try Sodium.ensureReady()
        try PostgresConnection.checkTransport(dsn: join.dsn, insecureAllowed: insecureTransport)
        let member = try MemberKeys.generate()
        let genesis = try requestToJoin(join, memberName: memberName, member: member, insecureTransport: insecureTransport) { genesis in
            let name = localName ?? genesis.name
            try TeamName.validate(name)
            try requireNoTeamFile(TeamFile.path(name: name), name: name)
        }
        let name = localName ?? genesis.name
        try TeamFile.create(
            at: TeamFile.path(name: name), teamName: name, keychainID: join.keychainID, dsn: join.dsn, memberID: member.memberID,
            insecureTransport: insecureTransport, seed: member.seed, password: password, profile: profile)
        return (name, genesis.name, member.fingerprint)
    }

    /// The server part of `join`: checks the genesis against the join string's id (then
    /// calls `check` with it, before anything is written) and leaves `member`'s join request.
    /// - Returns: the verified genesis.
    package static func requestToJoin(
        _ join: JoinString, memberName: String, member: MemberKeys, insecureTransport: Bool = false,
        check: (Genesis) throws -> Void = { _ in }
    ) throws -> Genesis {
        let connection = try PostgresConnection(dsn: join.dsn, insecureTransport: insecureTransport)
        try PostgresSchema.check(connection)
        let store = PostgresItemStore(connection: connection, keychainID: join.keychainID, label: "the team keychain")
        let tables = TeamTables(connection: connection, keychainID: join.keychainID)
        let genesisBytes = try store.transaction(write: false) { try tables.genesis() }
        guard let genesisBytes else {
            throw KeychainError(
                errSecNoSuchKeychain, "the server holds no team keychain with the join string's id",
                hint: "check the DSN and copy the whole join string again")
        }
        let genesis = try Genesis(encoded: genesisBytes, expecting: join.keychainID)
        try check(genesis)
        let request = JoinRequest(name: memberName, keys: member, keychainID: join.keychainID)
        try store.transaction(write: true) { try tables.putRequest(fingerprint: member.fingerprint, request: request.encoded) }
        return genesis
    }

    /// Adds the device that printed `fingerprint` as `memberName` with `role`: its keys come
    /// from its join request and must have exactly that fingerprint.
    package static func add(_ opened: TeamKeychains.Opened, memberName: String, fingerprint typed: String, role: MemberRole) throws -> MemberRecord {
        let fingerprint = try MemberKeys.normalizeFingerprint(typed)
        let a = opened.authority
        let stored = try a.store.transaction(write: false) { try a.tables.request(fingerprint: fingerprint) }
        guard let stored else {
            throw KeychainError(
                errSecItemNotFound, "no device asked to join \(a.label) with the fingerprint \(fingerprint)",
                hint: "run `kc team join JOIN-STRING` on that device first, and compare the fingerprint it prints")
        }
        let request = try JoinRequest(encoded: stored)
        guard request.fingerprint == fingerprint, request.isSelfSigned(keychainID: a.keychainID) else {
            throw KeychainError(
                errSecInvalidKeychain,
                "the keys the server holds for fingerprint \(fingerprint) do not have that fingerprint: the server substituted a key; nobody was added",
                hint: "see docs/team.md, \"What the server can and cannot do\"")
        }
        let record = MemberRecord(name: memberName, role: role, boxPublicKey: request.boxPublicKey, signPublicKey: request.signPublicKey)
        try changeRoster(opened, rekey: false) { roster in try Roster(roster.members + [record]) }
        try? a.store.transaction(write: true) { try a.tables.deleteRequest(fingerprint: fingerprint) }
        return record
    }

    /// Adds a CI runner `memberName` with `role`, valid until `expires` (Unix time, 0 for
    /// never): a new seed, delivered only inside the token this answers (`kcr1:…`).
    package static func addRunner(
        _ opened: TeamKeychains.Opened, teamName: String, memberName: String, role: MemberRole,
        expires: UInt64, dsn: String
    ) throws -> SecureBytes {
        let keys = try MemberKeys.generate()
        let record = MemberRecord(
            name: memberName, role: role, boxPublicKey: keys.boxPublicKey, signPublicKey: keys.signPublicKey,
            expires: expires, isRunner: true)
        try changeRoster(opened, rekey: false) { roster in try Roster(roster.members + [record]) }
        let token = try RunnerToken(
            keychainID: opened.authority.keychainID, seed: keys.seed.copy(prefix: keys.seed.count), name: teamName,
            dsn: SecureBytes(copying: Array(dsn.utf8)))
        return try token.encoded()
    }

    /// Removes the member `memberName` and re-keys: the members who remain get a new master
    /// key without a password; the removed one opens no wrap of it.
    package static func remove(_ opened: TeamKeychains.Opened, memberName: String) throws {
        try changeRoster(opened, rekey: true) { roster in
            guard roster.member(named: memberName) != nil else {
                throw KeychainError(errSecItemNotFound, "\(opened.authority.label) has no member named \(memberName)", hint: "see `kc team members`")
            }
            return try Roster(roster.members.filter { $0.name != memberName })
        }
    }

    private static func changeRoster(_ opened: TeamKeychains.Opened, rekey: Bool, _ change: (Roster) throws -> Roster) throws {
        _ = try opened.keychain.withTeamKeys { keys, adopt in
            try opened.authority.changeRoster(keys: keys, rekey: rekey, adopt: adopt, change)
        }
    }

    private static func requireNoTeamFile(_ path: String, name: String) throws {
        var st = stat()
        guard lstat(path, &st) != 0 else {
            throw KeychainError(
                errSecDuplicateKeychain, "this device already has a team keychain named \(name) (\(path))",
                hint: "choose another name with --name, or remove that file if the team is gone")
        }
    }
}
