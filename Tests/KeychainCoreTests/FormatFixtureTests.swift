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
        try k.add(
            genp([
                kSecAttrService: "deploy", kSecAttrAccount: "prod", kcAttrSecretServiceAttributes: ["env": "prod"],
                kcAttrContentType: "text/plain", kSecValueData: Data("ss-token".utf8)
            ]))
        let again = try Keychain.open(at: path, password: try secure(password))
        #expect(try again.check() == count + 1)
        #expect(try Self.secret(again, genp([kcAttrSecretServiceAttributes: ["env": "prod"]])) == Array("ss-token".utf8))
        #expect(
            try Self.secret(again, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod", kcAttrSecretServiceAttributes: [String: String]()]))
                == Array("prod-token-2".utf8))
    }

    /// What the format-3 fixture holds beyond the items of every fixture: a generic password
    /// with a Secret Service map, one stored as after-first-unlock (`ck`), one as
    /// when-unlocked-this-device-only (`aku`), and a certificate (stored `dk`, Apple's default).
    static func expectTheFormatThreeItems(_ k: Keychain) throws {
        #expect(try Self.secret(k, genp([kcAttrSecretServiceAttributes: ["env": "prod"]])) == Array("ss-token".utf8))
        let ss = try #require(try k.copyMatching(genp([kSecAttrService: "ss-app", kSecReturnAttributes: true])) as? [String: Any])
        #expect(ss[kcAttrSecretServiceAttributes] as? [String: String] == ["application": "ss-app", "env": "prod"])
        #expect(ss[kcAttrContentType] as? String == "text/plain")
        let cron = try #require(
            try k.copyMatching(genp([kSecAttrService: "backup", kSecAttrAccount: "cron", kSecReturnAttributes: true, kSecReturnData: true])) as? [String: Any])
        #expect(cron[kSecAttrAccessible] as? String == "ck")
        #expect((cron[kSecValueData] as? Data).map { Array($0) } == Array("cron-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "device", kSecAttrAccount: "only", kSecAttrAccessible: "aku"])) == Array("device-token".utf8))
        let cert = try #require(
            try k.copyMatching([kSecClass: kSecClassCertificate, kSecAttrLabel: "fixture certificate", kSecReturnAttributes: true]) as? [String: Any])
        #expect(cert[kSecAttrAccessible] as? String == "dk")
    }

    /// Format 5 → 6: no row changes; the key-slot table is created (empty) by the schema
    /// step and the record re-wrapped and re-authenticated in format 6. The migrated file
    /// then takes a recovery key slot, which opens it.
    @Test func formatFiveOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v5.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "5\n4\n5\n")
        let select = "SELECT hex(item_id), row_version, hex(wrapped_key), hex(metadata), hex(data), pclass FROM kc_items ORDER BY seq"
        let rows = try TempKeychain.run("/usr/bin/sqlite3", [path, select])
        let k = try Keychain.open(at: path, password: try secure("fixture-v5-password"))
        #expect(try Self.versions(path) == "6\n5\n6\n")
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, select]) == rows, "the migration to format 6 changes no row")
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT count(*) FROM kc_keyslots"]) == "0\n")
        #expect(try Self.protectionClasses(path) == "0|8\n1|2\n")
        #expect(try k.itemCount() == 10)
        #expect(try k.check() == 10)
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) == Array("prod-token-2".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "v5", kSecAttrAccount: "added"])) == Array("v5-token".utf8))
        #expect(try Self.secret(k, [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob"]) == Array("hunter2".utf8))
        expectStatus(errSecItemNotFound) { _ = try k.copyMatching(genp([kSecAttrService: "gone"])) }
        try Self.expectTheFormatThreeItems(k)
        #expect(try k.keySlots() == [KeySlotInfo(id: 1, kind: "password", created: nil)])
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v4-password")) }
        var shown: [UInt8] = []
        let added = try k.addRecoverySlot { key in shown = key.withUnsafeBytes { Array($0) } }
        #expect(added == 2 && shown.count == 32)
        let again = try Keychain.open(at: path, slot: .recovery, secret: try SecureBytes(copying: shown))
        #expect(try Self.secret(again, genp([kSecAttrService: "v5", kSecAttrAccount: "added"])) == Array("v5-token".utf8))
        try Self.expectSecretServiceItems(k, path: path, password: "fixture-v5-password", count: 10)
    }

    /// Every fixture, format 1 to 5, opens with its password and ends at format 6 with an
    /// empty key-slot table and schema 5.
    @Test(arguments: [1, 2, 3, 4, 5])
    func everyOlderFormatMigratesToFormatSix(version: Int) throws {
        let (directory, path) = try Self.copy("v\(version).keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let k = try Keychain.open(at: path, password: try secure("fixture-v\(version)-password"))
        #expect(try Self.versions(path) == "6\n5\n6\n")
        #expect(try k.keySlots().map(\.kind) == ["password"])
        #expect(try k.check() == (version < 3 ? 4 : version == 3 ? 8 : version == 4 ? 9 : 10))
    }

    /// A key-slot row written into a format-5 file before its migration (the schema step ran
    /// at a first open whose password was wrong, so the table exists) is not migrated: format
    /// 5's MAC covers the record with no slot, and the record read with the row differs.
    @Test func aSlotPutIntoAFormatFiveFileIsNotMigrated() throws {
        let (directory, path) = try Self.copy("v5.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("not the password")) }
        #expect(try Self.versions(path) == "5\n5\n5\n", "the schema step ran, the format did not move")
        let fields = "X'00000010" + String(repeating: "11", count: 16) + "00000048" + String(repeating: "22", count: 72) + "'"
        try TempKeychain.run("/usr/bin/sqlite3", [path, "INSERT INTO kc_keyslots VALUES (2, 'recovery', 1, \(fields))"])
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("fixture-v5-password")) }
        #expect(try Self.versions(path) == "5\n5\n5\n", "nothing was migrated")
    }

    /// A migrated file set back to format 5 does not open: the format is in the master key's
    /// associated data.
    @Test func aMigratedFileCannotBeSetBackToFormatFive() throws {
        let (directory, path) = try Self.copy("v5.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Keychain.open(at: path, password: try secure("fixture-v5-password"))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET format_version = 5; UPDATE kc_state SET min_writer_version = 5"])
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v5-password")) }
    }

    /// Format 4 → 5: no row changes (the after-first-unlock items stay where format 4 put
    /// them); the header MAC is written anew over the whole password record.
    @Test func formatFourOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v4.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "4\n4\n4\n")
        let rows = try TempKeychain.run(
            "/usr/bin/sqlite3", [path, "SELECT hex(item_id), row_version, hex(wrapped_key), hex(metadata), hex(data), pclass FROM kc_items ORDER BY seq"])
        let k = try Keychain.open(at: path, password: try secure("fixture-v4-password"))
        #expect(try Self.versions(path) == "6\n5\n6\n")
        #expect(
            try TempKeychain.run(
                "/usr/bin/sqlite3", [path, "SELECT hex(item_id), row_version, hex(wrapped_key), hex(metadata), hex(data), pclass FROM kc_items ORDER BY seq"])
                == rows,
            "the migration to format 5 changes no row")
        #expect(try Self.protectionClasses(path) == "0|7\n1|2\n")
        #expect(try k.itemCount() == 9)
        #expect(try k.check() == 9)
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) == Array("prod-token-2".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) == Array("staging-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "bin", kSecAttrAccount: "raw"])) == [0, 1] + Array("binary".utf8))
        #expect(try Self.secret(k, [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob"]) == Array("hunter2".utf8))
        expectStatus(errSecItemNotFound) { _ = try k.copyMatching(genp([kSecAttrService: "gone"])) }
        let prod = try #require(try k.copyMatching(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod", kSecReturnAttributes: true])) as? [String: Any])
        #expect(prod[kSecAttrLabel] as? String == "deploy prod")
        #expect(prod[kSecAttrComment] as? String == "a comment")
        try Self.expectTheFormatThreeItems(k)
        #expect(try k.copyMatching(genp([kSecAttrService: "presence", kSecAttrAccount: "guarded", kSecReturnAttributes: true])) is [String: Any])
        try Self.expectSecretServiceItems(k, path: path, password: "fixture-v4-password", count: 9)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v3-password")) }
        k.lockKeepingAfterFirstUnlock()
        #expect(try Self.secret(k, genp([kSecAttrService: "backup", kSecAttrAccount: "cron"])) == Array("cron-token".utf8))
        expectStatus(errSecInteractionNotAllowed) { _ = try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) }
    }

    /// A migrated file set back to format 4 (whose header MAC left the password record out)
    /// does not open: the format is in the master key's associated data.
    @Test func aMigratedFileCannotBeSetBackToFormatFour() throws {
        let (directory, path) = try Self.copy("v4.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Keychain.open(at: path, password: try secure("fixture-v4-password"))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET format_version = 4; UPDATE kc_state SET min_writer_version = 4"])
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v4-password")) }
    }

    /// The format-4 password record, authentic and opening with its password, spliced into
    /// the file after its migration (so that the next open would check the header with
    /// format 4's MAC, which leaves the record out) is refused: the migrated header's MAC is
    /// format 5's, and an open keychain takes no other format.
    @Test func aFormatFourRecordSplicedIntoAMigratedFileIsRefused() throws {
        let (directory, path) = try Self.copy("v4.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let k = try Keychain.open(at: path, password: try secure("fixture-v4-password"))
        try TempKeychain.run(
            "/usr/bin/sqlite3",
            [path, "ATTACH '\(Self.fixtures)/v4.keychain-db' AS o; DELETE FROM main.kc_keychain; INSERT INTO main.kc_keychain SELECT * FROM o.kc_keychain;"])
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("fixture-v4-password")) }
        expectStatus(errSecDecode) { _ = try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]) == "4\n", "nothing was migrated again")
    }

    @Test func formatThreeOpensAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v3.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "3\n3\n3\n")
        let k = try Keychain.open(at: path, password: try secure("fixture-v3-password"))
        #expect(try Self.versions(path) == "6\n5\n6\n")
        // The ck item and the certificate (dk) moved to the after-first-unlock class key.
        #expect(try Self.protectionClasses(path) == "0|6\n1|2\n")
        #expect(try k.itemCount() == 8)
        #expect(try k.check() == 8)
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"])) == Array("prod-token-2".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) == Array("staging-token".utf8))
        #expect(try Self.secret(k, genp([kSecAttrService: "bin", kSecAttrAccount: "raw"])) == [0, 1] + Array("binary".utf8))
        #expect(try Self.secret(k, [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob"]) == Array("hunter2".utf8))
        expectStatus(errSecItemNotFound) { _ = try k.copyMatching(genp([kSecAttrService: "gone"])) }
        try Self.expectTheFormatThreeItems(k)
        try Self.expectSecretServiceItems(k, path: path, password: "fixture-v3-password", count: 8)
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v2-password")) }
        // Locked the way the agent locks it, only the after-first-unlock items still read.
        k.lockKeepingAfterFirstUnlock()
        #expect(try Self.secret(k, genp([kSecAttrService: "backup", kSecAttrAccount: "cron"])) == Array("cron-token".utf8))
        expectStatus(errSecInteractionNotAllowed) { _ = try Self.secret(k, genp([kSecAttrService: "deploy", kSecAttrAccount: "staging"])) }
        expectStatus(errSecInteractionNotAllowed) { try k.add(genp([kSecAttrService: "new", kSecAttrAccessible: "ck", kSecValueData: Data("x".utf8)])) }
    }

    /// The protection class column, as `class|count` lines in class order.
    static func protectionClasses(_ path: String) throws -> String {
        try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT pclass, count(*) FROM kc_items GROUP BY pclass ORDER BY pclass"])
    }

    /// An attacker who flips a row's protection class (either way) in a migrated file makes
    /// that row fail to open: the class is in its associated data and accumulator term.
    @Test(arguments: [
        "UPDATE kc_items SET pclass = 0 WHERE pclass = 1 AND class = 'genp'",
        "UPDATE kc_items SET pclass = 1 WHERE seq = 1",
        "UPDATE kc_items SET pclass = 2 WHERE seq = 1"
    ])
    func aFlippedProtectionClassFailsToOpen(edit: String) throws {
        let (directory, path) = try Self.copy("v3.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Keychain.open(at: path, password: try secure("fixture-v3-password"))
        try TempKeychain.run("/usr/bin/sqlite3", [path, edit])
        expectStatus(errSecDecode, edit) { _ = try Keychain.open(at: path, password: try secure("fixture-v3-password")) }
    }

    /// A protection class put into a format-3 file before its migration is refused, not
    /// adopted (format 3 wrote none).
    @Test func aFormatThreeFileWithAProtectionClassPutInIsNotMigrated() throws {
        let (directory, path) = try Self.copy("v3.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The schema step (the pclass column) runs when the store opens; the attacker edits after that.
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("wrong")) }
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_items SET pclass = 1 WHERE seq = 2"])
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("fixture-v3-password")) }
        #expect(try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT format_version FROM kc_keychain"]).hasPrefix("3"))
    }

    /// A migrated format-4 file set back to format 3 (whose kc would seal everything
    /// when-unlocked) does not open.
    @Test func aMigratedFileCannotBeSetBackToFormatThree() throws {
        let (directory, path) = try Self.copy("v3.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Keychain.open(at: path, password: try secure("fixture-v3-password"))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET format_version = 3; UPDATE kc_state SET min_writer_version = 3"])
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("fixture-v3-password")) }
    }

    @Test func formatTwoOpensMigratesAndKeepsEveryItem() throws {
        let (directory, path) = try Self.copy("v2.keychain-db")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.versions(path) == "2\n2\n2\n")
        let k = try Keychain.open(at: path, password: try secure("fixture-v2-password"))
        #expect(try Self.versions(path) == "6\n5\n6\n")
        #expect(try Self.protectionClasses(path) == "0|4\n")
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
        let value =
            switch column {
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
        #expect(try Self.versions(path) == "6\n5\n6\n")
        #expect(try Self.protectionClasses(path) == "0|4\n")
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
        let value =
            column == "i_svce"
            ? "randomblob(16)"
            : "CAST(substr(\(column), 1, 30) || CASE WHEN substr(\(column), 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(\(column), 32) AS BLOB)"
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
