import KeychainCore
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// Team keychains for the team agent and the `kc team` commands (`docs/team.md`): opening
/// one as a member (a device's team file and password, or a runner token), creating one,
/// and asking to join one.
public enum TeamKeychains {
    /// Opens the team keychain `name` with `secret` (the password of this device's seed
    /// file, or a runner token `kcr1:…`), checks it against the server and the local
    /// checkpoint, and answers it ready for SecItem calls.
    /// - Parameter revocation: the keychain's (`KeyRevocation`), which shuts its connection
    ///   and wipes its keys, those of the open in progress included.
    public static func open(
        name: String, secret: borrowing SecureBytes, minimumGeneration: UInt64,
        revocation: KeyRevocation = KeyRevocation()
    ) throws -> Keychain {
        try openMember(name: name, secret: secret, revocation: revocation).keychain
    }

    /// What `openMember` answers: the keychain and its authority (the admin commands use it).
    package struct Opened {
        package let keychain: Keychain
        package let authority: TeamAuthority
    }

    /// Opens the team keychain `name` as `open` does, answering its authority too.
    package static func openMember(name: String, secret: borrowing SecureBytes, revocation: KeyRevocation = KeyRevocation()) throws -> Opened {
        try TeamName.validate(name)
        try Sodium.ensureReady()
        let isToken = secret.withUnsafeBytes { $0.starts(with: Array("kcr1:".utf8)) }
        let member: MemberKeys, keychainID: [UInt8], dsn: String, insecure: Bool
        if isToken {
            let token = try RunnerToken.parse(secret)
            guard token.name == name else {
                throw KeychainError(errSecParam, "the runner token is for team:\(token.name), not team:\(name)")
            }
            keychainID = token.keychainID
            dsn = token.dsn.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            insecure = false
            member = try MemberKeys(seed: token.seed.copy(prefix: token.seed.count))
        } else {
            let file = try TeamFile.read(at: TeamFile.path(name: name))
            guard file.teamName == name else { throw KeychainError(errSecDecode, "the team file of \(name) names another team (\(file.teamName))") }
            keychainID = file.keychainID
            dsn = file.dsn
            insecure = file.insecureTransport
            member = try MemberKeys(seed: file.openSeed(password: secret))
        }
        return try connect(name: name, keychainID: keychainID, dsn: dsn, insecure: insecure, member: member, revocation: revocation)
    }

    /// `KC_TEAM_MAX_STALENESS` in seconds (a number, or N followed by s, m, h or d); 0 when unset.
    /// - Throws: errSecParam when malformed.
    static func maxStaleness() throws -> UInt64 {
        guard let raw = getenv("KC_TEAM_MAX_STALENESS").map({ String(cString: $0) }), !raw.isEmpty else { return 0 }
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let factor = raw.last.flatMap { units[$0] }
        guard let n = UInt64(factor == nil ? raw : String(raw.dropLast())), n > 0, n < 10 * 365 * 86_400 else {
            throw KeychainError(errSecParam, "KC_TEAM_MAX_STALENESS is \"\(raw)\", not a duration like 900, 15m, 1h or 1d")
        }
        return n * (factor ?? 1)
    }

    /// Connects and verifies the keychain `keychainID` at `dsn` as `member`.
    /// - Parameter checkpoints: the folder of checkpoints (`Checkpoint.stateDirectory`).
    package static func connect(
        name: String, keychainID: [UInt8], dsn: String, insecure: Bool, member: MemberKeys,
        checkpoints: String = Checkpoint.stateDirectory, revocation: KeyRevocation = KeyRevocation()
    ) throws -> Opened {
        try PostgresConnection.checkTransport(dsn: dsn, insecureAllowed: insecure)
        let connection = try PostgresConnection(dsn: dsn, insecureTransport: insecure)
        // A lock or stop of the team agent during an operation, this open included
        // (`KeyRevocation`): the connection is shut (its waiting statement ends, none
        // follows) and this member's keys are zeroed with the keychain's. The checkpoint's
        // MAC key is not a team key: the lock still writes the checkpoint with it.
        let gate = connection.gate
        revocation.onRevoke { gate.revoke() }
        revocation.onRevoke { member.wipe() }
        try PostgresSchema.check(connection)
        let label = TeamName.prefix + name
        let store = PostgresItemStore(connection: connection, keychainID: keychainID, label: label)
        let tables = TeamTables(connection: connection, keychainID: keychainID)
        let checkpoint = Checkpoint.path(stateDirectory: checkpoints, name: name, keychainID: keychainID)
        let authority = try TeamAuthority(
            label: label, keychainID: keychainID, store: store, tables: tables, member: member,
            checkpointPath: checkpoint, checkpointKey: Checkpoint.key(seed: member.seed))
        authority.maxStaleness = try maxStaleness()
        let keys = try authority.openAndVerify()
        try authority.checkFreshness()
        authority.saveCheckpoint(force: true)
        let keychain = Keychain.team(path: label, store: store, keys: keys, authority: authority, revocation: revocation)
        return Opened(keychain: keychain, authority: authority)
    }
}
