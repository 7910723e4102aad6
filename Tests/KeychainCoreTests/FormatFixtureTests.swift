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

    @Test func formatTwoOpensAsItIsAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let k = try Keychain.open(at: path, password: try secure("fixture-v2-password"))
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain; PRAGMA user_version"]) == "2\n2\n")
        try Self.expectTheFixtureItems(k)
        try k.add(genp([kSecAttrService: "later", kSecValueData: Data("new".utf8)]))
        #expect(try Keychain.open(at: path, password: try secure("fixture-v2-password")).check() == 5)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v1-password")) }
    }

    @Test func formatOneOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v1.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("1"))
        let k = try Keychain.open(at: path, password: try secure("fixture-v1-password"))
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain; PRAGMA user_version"]) == "2\n2\n")
        try Self.expectTheFixtureItems(k)
        // The migrated file is an ordinary current one: writes, a fresh open, the old password.
        try k.add(genp([kSecAttrService: "after-migration", kSecValueData: Data("new".utf8)]))
        let again = try Keychain.open(at: path, password: try secure("fixture-v1-password"))
        #expect(try again.check() == 5)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("wrong")) }
    }

    /// Format 1 did not cover index columns; the migration checks every row itself, so a
    /// format-1 file edited before its first open by this kc is refused, not laundered
    /// into a freshly authenticated one. Nothing is written.
    @Test(arguments: ["i_svce", "data", "metadata"])
    func anEditedFormatOneFileIsNotMigrated(column: String) throws {
        let (directory, path) = try Self.copy("v1.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let value = column == "i_svce" ? "randomblob(16)" : "CAST(substr(\(column), 1, 30) || randomblob(1) || substr(\(column), 32) AS BLOB)"
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
