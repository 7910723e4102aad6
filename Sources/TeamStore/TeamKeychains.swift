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
    public static func open(name: String, secret: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain {
        try openMember(name: name, secret: secret).keychain
    }

    /// What `openMember` answers: the keychain and its authority (the admin commands use it).
    package struct Opened {
        package let keychain: Keychain
        package let authority: TeamAuthority
    }

    /// Opens the team keychain `name` as `open` does, answering its authority too.
    package static func openMember(name: String, secret: borrowing SecureBytes) throws -> Opened {
        try TeamName.validate(name)
        try Sodium.ensureReady()
        let isToken = secret.withUnsafeBytes { $0.starts(with: Array("kcr1:".utf8)) }
        let member: MemberKeys, keychainID: [UInt8], dsn: String, insecure: Bool
        if isToken {
            let bytes: [UInt8] = secret.withUnsafeBytes { Array($0) }
            let token = try RunnerToken.parse(bytes)
            guard token.name == name else {
                throw KeychainError(errSecParam, "the runner token is for team:\(token.name), not team:\(name)")
            }
            keychainID = token.keychainID
            dsn = token.dsn
            insecure = false
            member = try MemberKeys(seed: token.seed.copy(prefix: token.seed.count))
        } else {
            let file = try TeamFile.read(at: TeamPaths.teamFile(name))
            guard file.name == name else { throw KeychainError(errSecDecode, "the team file of \(name) names another team (\(file.name))") }
            keychainID = file.keychainID
            dsn = file.dsn
            insecure = file.insecureTransport
            member = try MemberKeys(seed: file.openSeed(password: secret))
        }
        return try connect(name: name, keychainID: keychainID, dsn: dsn, insecure: insecure, member: member)
    }

    /// Connects and verifies the keychain `keychainID` at `dsn` as `member`.
    static func connect(name: String, keychainID: [UInt8], dsn: String, insecure: Bool, member: MemberKeys) throws -> Opened {
        try PostgresConnection.checkTransport(dsn: dsn, insecureAllowed: insecure)
        let connection = try PostgresConnection(dsn: dsn)
        try PostgresSchema.check(connection)
        let label = TeamName.prefix + name
        let store = PostgresItemStore(connection: connection, keychainID: keychainID, label: label)
        let tables = TeamTables(connection: connection, keychainID: keychainID)
        let checkpoint = Checkpoint.path(stateDirectory: Checkpoint.stateDirectory, name: name, keychainID: keychainID)
        let authority = try TeamAuthority(label: label, keychainID: keychainID, store: store, tables: tables, member: member,
                                          checkpointPath: checkpoint, checkpointKey: Checkpoint.key(seed: member.seed))
        let keys = try authority.openAndVerify()
        authority.saveCheckpoint(force: true)
        return Opened(keychain: Keychain.team(path: label, store: store, keys: keys, authority: authority), authority: authority)
    }
}
