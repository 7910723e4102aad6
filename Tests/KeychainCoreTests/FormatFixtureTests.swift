import Foundation
import Testing
@testable import KeychainCore

/// Every keychain format kc ever wrote keeps opening: a copy of each committed fixture
/// (Tests/Fixtures/format/README.md) is opened with its password, migrated to the current
/// format, and read back item by item.
@Suite struct FormatFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/format").path

    /// A private copy of a fixture (the original is never written).
    static func copy(_ name: String) throws -> (directory: String, path: String) {
        let directory = try TempKeychain.makeDirectory()
        let path = directory + "/" + name
        try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: path)
        chmod(path, 0o600)
        return (directory, path)
    }

    static func secret(_ k: Keychain, _ q: [String: Any]) throws -> [UInt8]? {
        var q = q
        q[kSecReturnData] = true
        return (try k.copyMatching(q) as? Data).map { Array($0) }
    }

    /// The items every format fixture holds (Tests/Fixtures/format/README.md).
    static func expectTheFixtureItems(_ k: Keychain) throws {
        #expect(try k.itemCount() == 4)
        #expect(try k.check() == 4)
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) == Array("prod-token-2".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) == Array("staging-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "bin", kSecAttrAccount: "raw"])) == [0, 1] + Array("binary".utf8))
        #expect(try Self.secret(k, [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob"]) == Array("hunter2".utf8))
        let prod = try #require(try k.copyMatching(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod", kSecReturnAttributes: true])) as? [String: Any])
        #expect(prod[kSecAttrLabel] as? String == "deploy prod")
        #expect(prod[kSecAttrComment] as? String == "a comment")
        expectStatus(errSecItemNotFound) { _ = try k.copyMatching(genp([kSecAttrService: "gone"])) }
    }

    /// The format and schema versions and the minimum writer version of a file.
    static func versions(_ path: String) throws -> String {
        try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain; PRAGMA user_version; SELECT min_writer_version FROM kc_state"])
    }

    /// A migrated file takes format 3's items: a generic password with a Secret Service map,
    /// found by its pairs, here and after a fresh open.
    static func expectSecretServiceItems(_ k: Keychain, path: String, password: String, count: Int) throws {
        try k.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod", kcAttrSecretServiceAttributes: ["env": "prod"],
                        kcAttrContentType: "text/plain", kSecValueData: Data("ss-token".utf8)]))
        let again = try Keychain.open(at: path, password: try secure(password))
        #expect(try again.check() == count + 1)
        #expect(try Self.secret(again, genp([kcAttrSecretServiceAttributes: ["env": "prod"]])) == Array("ss-token".utf8))
        #expect(try Self.secret(again, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod", kcAttrSecretServiceAttributes: [String: String]()])) == Array("prod-token-2".utf8))
    }

    /// What the format-3 fixture holds beyond the items of every fixture: a generic password
    /// with a Secret Service map, one stored as after-first-unlock (`ck`), one as
    /// when-unlocked-this-device-only (`aku`), and a certificate (stored `dk`, Apple's default).
    static func expectTheFormatThreeItems(_ k: Keychain) throws {
        #expect(try Self.secret(k, genp([kcAttrSecretServiceAttributes: ["env": "prod"]])) == Array("ss-token".utf8))
        let ss = try #require(try k.copyMatching(genp([kSecAttrService: "ss-app", kSecReturnAttributes: true])) as? [String: Any])
        #expect(ss[kcAttrSecretServiceAttributes] as? [String: String] == ["application": "ss-app", "env": "prod"])
        #expect(ss[kcAttrContentType] as? String == "text/plain")
        let cron = try #require(try k.copyMatching(genp([kSecAttrService: "backup", kSecAttrAccount: "cron", kSecReturnAttributes: true, kSecReturnData: true])) as? [String: Any])
        #expect(cron[kSecAttrAccessible] as? String == "ck")
        #expect((cron[kSecValueData] as? Data).map { Array($0) } == Array("cron-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "device", kSecAttrAccount: "only", kSecAttrAccessible: "aku"])) == Array("device-token".utf8))
        let cert = try #require(try k.copyMatching([kSecClass: kSecClassCertificate, kSecAttrLabel: "fixture certificate", kSecReturnAttributes: true]) as? [String: Any])
        #expect(cert[kSecAttrAccessible] as? String == "dk")
    }

    @Test func formatThreeOpensAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v3.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "3\n3\n3\n")
        let k = try Keychain.open(at: path, password: try secure("fixture-v3-password"))
        #expect(try k.itemCount() == 8)
        #expect(try k.check() == 8)
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) == Array("prod-token-2".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) == Array("staging-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "bin", kSecAttrAccount: "raw"])) == [0, 1] + Array("binary".utf8))
        #expect(try Self.secret(k, [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob"]) == Array("hunter2".utf8))
        expectStatus(errSecItemNotFound) { _ = try k.copyMatching(genp([kSecAttrService: "gone"])) }
        try Self.expectTheFormatThreeItems(k)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v2-password")) }
    }

    @Test func formatTwoOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "2\n2\n2\n")
        let k = try Keychain.open(at: path, password: try secure("fixture-v2-password"))
        #expect(try Self.versions(path) == "3\n3\n3\n")
        try Self.expectTheFixtureItems(k)
        try k.add(genp([kSecAttrService: "later", kSecValueData: Data("new".utf8)]))
        #expect(try Keychain.open(at: path, password: try secure("fixture-v2-password")).check() == 5)
        try Self.expectSecretServiceItems(k, path: path, password: "fixture-v2-password", count: 5)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v1-password")) }
    }

    /// Format 2 covered every column already; an edit made before the first open by this kc
    /// is refused, and the file is left as it was.
    @Test(arguments: ["i_svce", "seq", "data"])
    func anEditedFormatTwoFileIsNotMigrated(column: String) throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let value = switch column {
        case "seq": "17"
        case "data": "CAST(substr(data, 1, 30) || CASE WHEN substr(data, 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(data, 32) AS BLOB)"
        default: "randomblob(16)"
        }
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_items SET \(column) = \(value) WHERE seq = 2"])
        expectStatus(errSecDecode, "edited \(column)") { _ = try Keychain.open(at: path, password: try secure("fixture-v2-password")) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("2"))
    }

    /// A pair row slipped into a format-2 file before its migration (where no item had a
    /// map) is refused, not adopted by the migration.
    @Test func aFormatTwoFileWithAPairPutInIsNotMigrated() throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // This kc's schema step runs when the store opens; the attacker adds the row after that.
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("wrong")) }
        try TempKeychain.run("/usr/bin/sqlite3", [path, "INSERT INTO kc_pairs VALUES (2, randomblob(16))"])
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("fixture-v2-password")) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("2"))
    }

    /// A format-3 file whose format is set back to 2 (so that an older kc would write it)
    /// does not open: the format is in the master key's associated data.
    @Test func aMigratedFileCannotBeSetBackToFormatTwo() throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Keychain.open(at: path, password: try secure("fixture-v2-password"))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET format_version = 2; UPDATE kc_state SET min_writer_version = 2"])
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v2-password")) }
    }

    @Test func formatOneOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v1.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("1"))
        let k = try Keychain.open(at: path, password: try secure("fixture-v1-password"))
        #expect(try Self.versions(path) == "3\n3\n3\n")
        try Self.expectTheFixtureItems(k)
        // The migrated file is an ordinary current one: writes, a fresh open, the old password.
        try k.add(genp([kSecAttrService: "after-migration", kSecValueData: Data("new".utf8)]))
        let again = try Keychain.open(at: path, password: try secure("fixture-v1-password"))
        #expect(try again.check() == 5)
        try Self.expectSecretServiceItems(k, path: path, password: "fixture-v1-password", count: 5)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("wrong")) }
    }

    /// Format 1 did not cover index columns; the migration checks every row itself, so a
    /// format-1 file edited before its first open by this kc is refused, not laundered
    /// into a freshly authenticated one. Nothing is written.
    @Test(arguments: ["i_svce", "data", "metadata"])
    func anEditedFormatOneFileIsNotMigrated(column: String) throws {
        let (directory, path) = try Self.copy("v1.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let value = column == "i_svce" ? "randomblob(16)" : "CAST(substr(\(column), 1, 30) || CASE WHEN substr(\(column), 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(\(column), 32) AS BLOB)"
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_items SET \(column) = \(value) WHERE seq = 2"])
        expectStatus(errSecDecode, "edited \(column)") { _ = try Keychain.open(at: path, password: try secure("fixture-v1-password")) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("1"))
    }

    /// A format-1 file with a row put back (the check format 1 always had) is refused too.
    @Test func aFormatOneFileWithADeletedRowPutBackIsNotMigrated() throws {
        let (directory, path) = try Self.copy("v1.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TempKeychain.run("/usr/bin/sqlite3", [path, "DELETE FROM kc_items WHERE seq = 4"])
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("fixture-v1-password")) }
    }
}
