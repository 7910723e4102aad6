import Foundation
import Testing
@testable import KeychainCore

/// Opening with a password, changing it, and re-keying.
@Suite struct PasswordTests {
    @Test func wrongPasswordIsAuthFailed() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        for wrong in ["", "correct horse battery stapl", "correct horse battery staple ", "CORRECT HORSE BATTERY STAPLE"] {
            do {
                _ = try t.reopen(password: wrong)
                Issue.record("opened with a wrong password")
            } catch let e as KeychainError {
                #expect(e.status == errSecAuthFailed)
                #expect(wrong.isEmpty || !e.message.contains(wrong), "the message never repeats the password")
            }
        }
    }

    @Test func changePasswordKeepsItemsAndRetiresTheOldOne() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("kept".utf8)]))
        let oldWrap = try t.sql("SELECT hex(wrapped_master_key) FROM kc_keychain").trimmingCharacters(in: .whitespacesAndNewlines)
        let oldSalt = try t.sql("SELECT hex(kdf_salt) FROM kc_keychain").trimmingCharacters(in: .whitespacesAndNewlines)
        let dataBefore = try t.sql("SELECT hex(data) FROM kc_items")
        try t.keychain.changePassword(to: try secure("new password"))
        expectStatus(errSecAuthFailed) { _ = try t.reopen() }
        let k = try t.reopen(password: "new password")
        #expect(try k.copyMatching(genp([kSecAttrService: "s", kSecReturnData: true])) as? Data == Data("kept".utf8))
        #expect(try t.sql("SELECT hex(data) FROM kc_items") == dataBefore, "items are not touched")
        #expect(try t.sql("SELECT hex(kdf_salt) FROM kc_keychain").trimmingCharacters(in: .whitespacesAndNewlines) != oldSalt, "a fresh salt")
        // The TRUNCATE checkpoint leaves no copy of the old wrap in the -wal file.
        #expect(!contains(t.rawBytes(), try KeyHierarchyTests.hex(oldWrap)))
        // The same keychain object keeps working.
        try t.keychain.add(genp([kSecAttrService: "t"]))
    }

    /// Issue 29, item 14, in this process: the password record of a copy made before the
    /// change, spliced into the live file, used to open with the old password and pass every
    /// check. Format 5's header MAC covers the record: the open keychain, a fresh open with
    /// either password and `check()` all refuse it.
    @Test func anOlderPasswordRecordSplicedInIsRefused() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("kept".utf8)]))
        try t.sql("ATTACH '\(t.directory)/old.db' AS o; CREATE TABLE o.record AS SELECT * FROM main.kc_keychain;")
        try t.keychain.changePassword(to: try secure("new password"))
        try t.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("later".utf8)]))
        try t.sql("ATTACH '\(t.directory)/old.db' AS o; DELETE FROM main.kc_keychain; INSERT INTO main.kc_keychain SELECT * FROM o.record;")
        expectStatus(errSecDecode) { _ = try t.keychain.copyMatching(genp([kSecAttrService: "after", kSecReturnData: true])) }
        expectStatus(errSecDecode) { _ = try t.reopen() }
        expectStatus(errSecAuthFailed) { _ = try t.reopen(password: "new password") }
    }

    @Test func changePasswordToAnotherProfile() throws {
        let t = try TempKeychain()
        #expect(try t.keychain.kdfProfile() == .interactive)
        try t.keychain.changePassword(to: try secure("pw2"), profile: .moderate)
        #expect(try t.keychain.kdfProfile() == .moderate)
        _ = try t.reopen(password: "pw2")
    }

    @Test func rekeyReplacesTheMasterKeyAndKeepsSecrets() throws {
        let t = try TempKeychain()
        let der = try Vectors.load("cert-rsa-v3.der")
        try t.keychain.add(genp([kSecAttrService: "s", kSecAttrAccount: "a", kSecValueData: Data("one".utf8)]))
        try t.keychain.add([kSecClass: kSecClassInternetPassword, kSecAttrServer: "h", kSecValueData: Data("two".utf8)])
        try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data(der)])
        let before = try t.sql("SELECT hex(item_id), hex(data), hex(i_svce), hex(metadata), hex(wrapped_key) FROM kc_items ORDER BY seq")
            .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        try t.keychain.rekey(newPassword: try secure("rekeyed"))
        let after = try t.sql("SELECT hex(item_id), hex(data), hex(i_svce), hex(metadata), hex(wrapped_key) FROM kc_items ORDER BY seq")
            .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(before.count == 3 && after.count == 3)
        for (b, a) in zip(before, after) {
            #expect(b[0] == a[0], "item ids are kept")
            #expect(b[1] == a[1], "secrets' ciphertexts are kept")
            #expect(b[3] != a[3] && b[4] != a[4], "metadata and data keys are re-sealed")
        }
        #expect(before[0][2] != after[0][2], "blind indexes change with the master key")
        expectStatus(errSecAuthFailed) { _ = try t.reopen() }
        let k = try t.reopen(password: "rekeyed")
        #expect(try k.copyMatching(genp([kSecAttrService: "s", kSecReturnData: true])) as? Data == Data("one".utf8))
        #expect(try k.copyMatching([kSecClass: kSecClassInternetPassword, kSecAttrServer: "h", kSecReturnData: true]) as? Data == Data("two".utf8))
        #expect(try k.copyMatching([kSecClass: kSecClassCertificate, kSecReturnData: true]) as? Data == Data(der))
        try t.keychain.add(genp([kSecAttrService: "after rekey"]))
        #expect(try k.itemCount() == 4)
    }

    @Test func anOldCopyOfTheFileIsARollback() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s"]))
        try t.keychain.store.compactLog()
        let copy = try #require(FileManager.default.contents(atPath: t.path))
        try t.keychain.add(genp([kSecAttrService: "t"]))
        let seen = t.keychain.generation
        #expect(seen == 2)
        // Restore the older file while kc is not running.
        let restored = t.directory + "/restored.keychain-db"
        #expect(FileManager.default.createFile(atPath: restored, contents: copy, attributes: [.posixPermissions: 0o600]))
        // Whoever remembers the generation (the agent) refuses it...
        expectStatus(errSecDecode) {
            _ = try Keychain.open(at: restored, password: try secure(TempKeychain.password), minimumGeneration: seen)
        }
        // ...but the file alone cannot tell: documented in docs/security.md.
        #expect(try Keychain.open(at: restored, password: try secure(TempKeychain.password)).itemCount() == 1)
    }
}
