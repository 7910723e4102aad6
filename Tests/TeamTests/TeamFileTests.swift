import Foundation
import Testing
import KeychainCore
import TeamCore
import KCTestSupport

/// This device's team file (`docs/format.md` §9.5): private on disk, created once, and
/// sealed so that the seed opens only with the team password and only while every other
/// field is what was written.
@Suite struct TeamFileTests {
    /// The team password of the fixtures.
    static let password = "team password"

    /// A private home, a member and a team file path in a folder that does not exist yet.
    struct Fixture {
        /// The private home (removed at the end).
        let home: KCHome
        /// The team file's path, in folders not made yet.
        let path: String
        /// This device's member keys.
        let keys: MemberKeys
        /// The keychain id.
        let keychainID = Sodium.randomBytes(32)
        /// The DSN.
        let dsn = "postgresql://kc@db.internal/kc?sslmode=verify-full"

        /// A new home and member.
        init() throws {
            home = try KCHome()
            path = home.directory + "/data/kc/teams/infra.team"
            keys = try MemberKeys.generate()
        }

        /// Creates the team file (INTERACTIVE Argon2id, for speed).
        @discardableResult
        func create(insecureTransport: Bool = false) throws -> TeamFile {
            try TeamFile.create(
                at: path, teamName: "infra", keychainID: keychainID, dsn: dsn, memberID: keys.memberID,
                insecureTransport: insecureTransport, seed: keys.seed,
                password: SecureBytes(copying: Array(TeamFileTests.password.utf8)), profile: .interactive)
        }

        /// The file's bytes.
        var bytes: [UInt8] { get throws { Array(try Data(contentsOf: URL(fileURLWithPath: path))) } }

        /// Overwrites the file in place (its mode stays 0600).
        func overwrite(_ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
    }

    /// A password as secure bytes.
    static func password(_ text: String = password) throws -> SecureBytes { try SecureBytes(copying: Array(text.utf8)) }

    /// The permission bits of a path.
    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aTeamFileRoundTripsAndOpensItsSeedWithThePassword() throws {
        let f = try Fixture()
        let created = try f.create(insecureTransport: true)
        let read = try TeamFile.read(at: f.path)
        #expect(read == created)
        #expect(read.teamName == "infra" && read.keychainID == f.keychainID && read.dsn == f.dsn)
        #expect(read.memberID == f.keys.memberID && read.insecureTransport)
        let seed = try read.openSeed(password: Self.password())
        #expect(try MemberKeys(seed: seed).fingerprint == f.keys.fingerprint)
        // The seed is not in the file in the clear.
        let seedBytes = f.keys.seed.withUnsafeBytes { Array($0) }
        let file = try f.bytes
        #expect(!(0...(file.count - 32)).contains { Array(file[$0..<$0 + 32]) == seedBytes })
        #expect(try !Fixture().create(insecureTransport: false).insecureTransport)
    }

    @Test func theFileIsPrivateInAPrivateFolder() throws {
        let f = try Fixture()
        try f.create()
        #expect(try Self.mode(f.path) == 0o600)
        #expect(try Self.mode(f.home.directory + "/data/kc/teams") == 0o700)
        #expect(try Self.mode(f.home.directory + "/data/kc") == 0o700)
        #expect(TeamFile.path(name: "infra").hasSuffix("/kc/teams/infra.team"))
    }

    @Test func aWrongPasswordIsAuthFailed() throws {
        let f = try Fixture()
        try f.create()
        let e = Self.failure { _ = try TeamFile.read(at: f.path).openSeed(password: Self.password("team passwore")) }
        #expect(e?.status == errSecAuthFailed)
        #expect(e?.message == "wrong team password for team infra (or its team file was altered)")
    }

    @Test func anExistingFileIsNotOverwritten() throws {
        let f = try Fixture()
        try f.create()
        let before = try f.bytes
        #expect(Self.failure { _ = try f.create() }?.status == errSecDuplicateKeychain)
        #expect(try f.bytes == before)
    }

    @Test func aMissingFileIsNoSuchKeychain() throws {
        let f = try Fixture()
        #expect(Self.failure { _ = try TeamFile.read(at: f.path) }?.status == errSecNoSuchKeychain)
    }

    @Test func aFileOthersCanReadOrALinkIsRefused() throws {
        let f = try Fixture()
        try f.create()
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: f.path)
        #expect(Self.failure { _ = try TeamFile.read(at: f.path) }?.status == errSecParam)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: f.path)
        let link = f.home.directory + "/data/kc/teams/link.team"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: f.path)
        #expect(Self.failure { _ = try TeamFile.read(at: link) }?.status == errSecParam)
    }

    /// Every field is covered: a byte changed in the flags, the name, the keychain id, the
    /// DSN, the member id, the salt or the sealed seed, and the seed does not open.
    @Test func editingAnyFieldLosesTheSeed() throws {
        let f = try Fixture()
        try f.create()
        let original = try f.bytes
        func offset(of needle: [UInt8]) -> Int {
            (0...(original.count - needle.count)).first { Array(original[$0..<$0 + needle.count]) == needle } ?? -1
        }
        let flags = 8
        let name = offset(of: Array("infra".utf8))
        let id = offset(of: f.keychainID)
        let dsn = offset(of: Array(f.dsn.utf8))
        let member = offset(of: f.keys.memberID)
        let salt = member + 16 + 4 + 8 + 8 + 4
        let sealed = original.count - 10
        #expect([name, id, dsn, member].allSatisfy { $0 > flags })
        for (what, at, xor) in [
            ("flags", flags, UInt8(1)), ("name", name, 2), ("keychain id", id + 5, 1), ("DSN", dsn + 3, 1),
            ("member id", member + 15, 0x80), ("salt", salt, 1), ("sealed seed", sealed, 1)
        ] {
            var edited = original
            edited[at] ^= xor
            try f.overwrite(edited)
            let e = Self.failure { _ = try TeamFile.read(at: f.path).openSeed(password: Self.password()) }
            #expect(e?.status == errSecAuthFailed, "editing the \(what) must lose the seed")
        }
        try f.overwrite(original)
        #expect(Self.failure { _ = try TeamFile.read(at: f.path).openSeed(password: Self.password()) } == nil)
    }

    /// A file edited to weaker Argon2id parameters (a downgrade) is refused before any
    /// derivation, like a keychain's header.
    @Test func aDowngradedKDFIsRefused() throws {
        let f = try Fixture()
        try f.create()
        var edited = try f.bytes
        let member = (0...(edited.count - 16)).first { Array(edited[$0..<$0 + 16]) == f.keys.memberID } ?? 0
        let opslimit = member + 16 + 4
        edited[opslimit + 7] = 1
        try f.overwrite(edited)
        #expect(Self.failure { _ = try TeamFile.read(at: f.path).openSeed(password: Self.password()) }?.status == errSecDecode)
    }

    @Test(arguments: [0, 3, 8, 40, 150])
    func aTruncatedOrForeignFileIsDecodeError(_ keep: Int) throws {
        let f = try Fixture()
        try f.create()
        let original = try f.bytes
        try f.overwrite(Array(original.prefix(keep)))
        #expect(Self.failure { _ = try TeamFile.read(at: f.path) }?.status == errSecDecode)
        try f.overwrite(original + [0])
        #expect(Self.failure { _ = try TeamFile.read(at: f.path) }?.status == errSecDecode)
        try f.overwrite(Array("SQLite format 3\0".utf8) + original)
        #expect(Self.failure { _ = try TeamFile.read(at: f.path) }?.status == errSecDecode)
    }

    @Test func badFieldsAreRefusedAtCreation() throws {
        let f = try Fixture()
        let pw = try Self.password()
        #expect(
            Self.failure {
                _ = try TeamFile.create(
                    at: f.path, teamName: "Infra", keychainID: f.keychainID, dsn: f.dsn, memberID: f.keys.memberID,
                    insecureTransport: false, seed: f.keys.seed, password: pw, profile: .interactive)
            }?.status == errSecParam)
        #expect(
            Self.failure {
                _ = try TeamFile.create(
                    at: f.path, teamName: "infra", keychainID: [1, 2], dsn: f.dsn, memberID: f.keys.memberID,
                    insecureTransport: false, seed: f.keys.seed, password: pw, profile: .interactive)
            }?.status == errSecParam)
        #expect(
            Self.failure {
                _ = try TeamFile.create(
                    at: f.path, teamName: "infra", keychainID: f.keychainID, dsn: "", memberID: f.keys.memberID,
                    insecureTransport: false, seed: f.keys.seed, password: pw, profile: .interactive)
            }?.status == errSecParam)
        #expect(!FileManager.default.fileExists(atPath: f.path))
    }

    /// The error a call throws (nil when it does not throw).
    static func failure(_ body: () throws -> Void) -> KeychainError? {
        do { try body(); return nil } catch let e as KeychainError { return e } catch { return nil }
    }
}
