import Foundation
import Testing
@testable import KeychainCore

/// Issue 15, items 1–6: an attacker who can write the keychain file and kept older copies
/// of its rows. Each test performs the attack with the sqlite3 tool (no kc code involved)
/// and shows that the open keychain (as the agent holds it) and a fresh open both refuse.
@Suite struct IntegrityTests {
    /// "deploy"/"prod" (seq 1) and "deploy"/"staging" (seq 2), then "gone" (seq 3).
    static func deployKeychain() throws -> TempKeychain {
        let t = try TempKeychain()
        for (account, secret) in [("prod", "prod-key"), ("staging", "staging-key")] {
            try t.keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: account, kSecValueData: Data(secret.utf8)]))
        }
        try t.keychain.add(genp([kSecAttrService: "gone", kSecAttrAccount: "x", kSecValueData: Data("deleted-secret".utf8)]))
        return t
    }

    static func secret(_ k: Keychain, _ account: String? = nil, service: String = "deploy") throws -> String? {
        var q = genp([kSecAttrService: service, kSecReturnData: true])
        if let account { q[kSecAttrAccount] = account }
        return (try k.copyMatching(q) as? Data).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Saves every row as it is now into `old.db` beside the keychain (an attacker's copy).
    static func saveRows(_ t: TempKeychain) throws {
        try t.sql("ATTACH '\(t.directory)/old.db' AS o; DROP TABLE IF EXISTS o.saved; CREATE TABLE o.saved AS SELECT * FROM main.kc_items;")
    }

    /// Expects errSecDecode from the live object, from a fresh open, and from `check()`.
    func expectDetected(_ t: TempKeychain, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectStatus(errSecDecode, "\(what): the open keychain answered", sourceLocation: sourceLocation) {
            _ = try Self.secret(t.keychain)
        }
        expectStatus(errSecDecode, "\(what): a fresh open accepted the file", sourceLocation: sourceLocation) {
            _ = try t.reopen()
        }
        expectStatus(errSecDecode, "\(what): kc verify passed", sourceLocation: sourceLocation) {
            _ = try t.keychain.check()
        }
    }

    // MARK: 1. A stale index hides the table from the integrity scan

    /// The attack as found: the indexes are hidden from SQLite (writable_schema), the table
    /// gets an older authentic row back and a deleted row re-inserted, and the indexes are
    /// put back, now stale. Lookups read the table through the stale index; the integrity
    /// scan must read the table too, and so sees the replay.
    @Test func aStaleIndexDoesNotHideReplayedRows() throws {
        let t = try Self.deployKeychain()
        try Self.saveRows(t)
        try t.keychain.update(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"]), [kSecValueData: Data("rotated-key".utf8)])
        try t.keychain.delete(genp([kSecAttrService: "gone"]))
        try t.keychain.store.compactLog()
        let attach = "ATTACH '\(t.directory)/old.db' AS o;"
        try t.sql("""
            \(attach) CREATE TABLE o.hidden AS SELECT * FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL;
            PRAGMA writable_schema = ON;
            DELETE FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL;
            """)
        try t.sql("""
            \(attach) DELETE FROM main.kc_items WHERE item_id IN (SELECT item_id FROM o.saved);
            INSERT INTO main.kc_items SELECT * FROM o.saved;
            """)
        try t.sql("""
            \(attach) PRAGMA writable_schema = ON;
            INSERT INTO main.sqlite_schema SELECT * FROM o.hidden;
            """)
        // The schema text is kc's again: only the rows betray the attack.
        #expect(try t.sql("SELECT count(*) FROM sqlite_schema WHERE type = 'index'").contains("11"))
        expectDetected(t, "stale index with replayed rows")
        // The whole-file check also finds the stale index itself.
        do {
            _ = try t.keychain.check()
        } catch let e as KeychainError {
            #expect(e.message.contains("storage") || e.message.contains("do not match"), "\(e.message)")
        }
    }

    /// Anything in the schema that kc did not write makes the file untrusted.
    @Test(arguments: [
        "CREATE INDEX kc_items_evil ON kc_items(seq DESC)",
        "CREATE TRIGGER kc_evil AFTER UPDATE ON kc_items BEGIN SELECT 1; END",
        "CREATE VIEW kc_evil AS SELECT * FROM kc_items",
        "CREATE TABLE kc_extra(x)",
        "DROP INDEX kc_items_svce",
        "DROP INDEX kc_items_acct; CREATE INDEX kc_items_acct ON kc_items(i_acct)",
    ])
    func aSchemaKcDidNotWriteIsRefused(sql: String) throws {
        let t = try Self.deployKeychain()
        try t.sql(sql)
        expectStatus(errSecDecode, sql) { _ = try t.reopen() }
        expectStatus(errSecDecode, sql) { _ = try t.keychain.check() }
    }

    /// SQLite's defensive settings are on in every kc connection: even kc's own connection
    /// cannot turn on writable_schema, and no trigger would run.
    @Test func theConnectionIsDefensive() throws {
        let t = try Self.deployKeychain()
        let db = try Database(path: t.path)
        try? db.exec("PRAGMA writable_schema = ON")   // refused or ignored: either is fine
        #expect(throws: KeychainError.self) { try db.exec("DELETE FROM sqlite_schema WHERE name = 'kc_items_svce'") }
        #expect(try t.sql("SELECT count(*) FROM sqlite_schema WHERE name = 'kc_items_svce'").contains("1"))
    }

    // MARK: 2. The agent's open keychain notices a file changed under it

    /// An older authentic row put back (with its indexes, through plain SQL) while the
    /// keychain stays open: the open keychain re-verifies before it answers.
    @Test func aReplayedRowIsNotServedByTheOpenKeychain() throws {
        let t = try Self.deployKeychain()
        #expect(try Self.secret(t.keychain, "prod") == "prod-key")
        try Self.saveRows(t)
        try t.keychain.update(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"]), [kSecValueData: Data("rotated-key".utf8)])
        #expect(try Self.secret(t.keychain, "prod") == "rotated-key")
        try t.sql("""
            ATTACH '\(t.directory)/old.db' AS o;
            DELETE FROM main.kc_items WHERE item_id = (SELECT item_id FROM o.saved WHERE seq = 1);
            INSERT INTO main.kc_items SELECT * FROM o.saved WHERE seq = 1;
            """)
        expectStatus(errSecDecode, "the open keychain served the replayed row") { _ = try Self.secret(t.keychain, "prod") }
        expectStatus(errSecDecode, "a write went ahead on a replayed file") {
            try t.keychain.add(genp([kSecAttrService: "new", kSecValueData: Data("x".utf8)]))
        }
        expectStatus(errSecDecode) { _ = try t.reopen() }
    }

    /// Bytes written straight into the file (not through SQLite, so SQLite's data_version
    /// does not move) are noticed too: the file's change time is part of what is compared.
    @Test func aRawWriteIntoTheFileIsNoticed() throws {
        let t = try Self.deployKeychain()
        try t.keychain.store.compactLog()
        #expect(try Self.secret(t.keychain, "prod") == "prod-key")
        let before = try #require(t.keychain.verifiedStamp)
        // Rewrite one byte of the file with its own value: no content changes, the change
        // time does.
        let fd = open(t.path, O_RDWR | O_CLOEXEC)
        #expect(fd >= 0)
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, 100) == 1)
        #expect(pwrite(fd, &byte, 1, 100) == 1)
        close(fd)
        #expect(try Self.secret(t.keychain, "prod") == "prod-key")
        #expect(t.keychain.verifiedStamp != before, "the open keychain did not notice the write")
    }

    /// The open keychain's own writes never cost a full scan: after a write the stamp it
    /// verified is the store's current one.
    @Test func ownWritesDoNotTriggerAScan() throws {
        let t = try Self.deployKeychain()
        for i in 0..<5 {
            try t.keychain.add(genp([kSecAttrService: "own-\(i)", kSecValueData: Data("x".utf8)]))
            #expect(t.keychain.verifiedStamp == (try t.keychain.store.changeStamp()), "write \(i) left the stamp stale")
        }
        // Another connection's commit is a change.
        let other = try t.reopen()
        try other.add(genp([kSecAttrService: "other", kSecValueData: Data("x".utf8)]))
        #expect(t.keychain.verifiedStamp != (try t.keychain.store.changeStamp()))
        #expect(try t.keychain.itemCount() == 9)
        #expect(t.keychain.verifiedStamp == (try t.keychain.store.changeStamp()))
    }

    // MARK: 3. Any edit of any stored column is detected at open

    @Test(arguments: ["i_svce", "i_acct", "i_labl", "pk", "item_id", "class", "row_version", "seq",
                      "wrapped_key", "metadata", "data"])
    func editingAnyColumnOfAnyRowIsDetectedAtOpen(column: String) throws {
        let t = try Self.deployKeychain()
        // The "gone" row (seq 3): not one a lookup for "deploy" reaches.
        let value: String
        switch column {
        case "class": value = "'inet'"
        case "row_version": value = "row_version + 1"
        case "seq": value = "17"
        case "item_id": value = "randomblob(16)"
        case "data", "metadata", "wrapped_key": value = "substr(\(column), 1, 30) || randomblob(1) || substr(\(column), 32)"
        default: value = "randomblob(length(\(column)))"
        }
        try t.sql("UPDATE kc_items SET \(column) = \(value) WHERE seq = 3")
        expectDetected(t, "edited \(column) of an unrelated row")
    }

    /// The index column overwritten with random bytes used to turn a lookup into "not
    /// found" (exit 44) until a full scan; now the next open refuses the file.
    @Test func anItemCannotBeHiddenByItsIndexColumn() throws {
        let t = try Self.deployKeychain()
        try t.sql("UPDATE kc_items SET i_svce = randomblob(16) WHERE seq = 1")
        expectStatus(errSecDecode, "the item vanished instead") { _ = try Self.secret(t.keychain, "prod") }
        expectStatus(errSecDecode) { _ = try t.reopen() }
    }

    // MARK: 4. What orders "first match" is authenticated

    /// Swapping seq between prod and staging would steer a lookup without an account.
    @Test func swappingTheOrderOfTwoItemsIsDetected() throws {
        let t = try Self.deployKeychain()
        #expect(try Self.secret(t.keychain) == "prod-key", "first match by insertion order")
        try t.sql("UPDATE kc_items SET seq = -seq WHERE seq IN (1, 2); UPDATE kc_items SET seq = 3 + seq WHERE seq IN (-1, -2);")
        expectDetected(t, "swapped seq")
    }

    // MARK: 5. No KDF downgrade during a password change

    /// The KDF parameters are lowered in the file after the open, while kc waits for the
    /// new password: the change must not wrap the new password with them, and writes
    /// nothing.
    @Test(arguments: [false, true])
    func loweredKDFParametersAreNotUsedByPasswd(rekey: Bool) throws {
        let directory = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/moderate.keychain-db"
        let keychain = try Keychain.create(at: path, password: try secure("old"), profile: .moderate)
        try keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("v".utf8)]))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET kdf_opslimit = 2, kdf_memlimit = 67108864"])
        expectStatus(errSecInteractionNotAllowed, "a downgraded record was accepted") {
            if rekey {
                try keychain.rekey(newPassword: try secure("new"))
            } else {
                try keychain.changePassword(to: try secure("new"))
            }
        }
        // Nothing was written: the lowered record is still the attacker's, and its wrap
        // (made under the moderate parameters) opens with no password.
        let after = try TempKeychain.run("/usr/bin/sqlite3", [path, "SELECT kdf_opslimit, kdf_memlimit FROM kc_keychain"])
        #expect(after.trimmingCharacters(in: .whitespacesAndNewlines) == "2|67108864")
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: path, password: try secure("new")) }
    }

    /// Without an attack, the change keeps the parameters the file was opened with.
    @Test func passwdKeepsTheOpenedParameters() throws {
        let t = try TempKeychain()
        try t.keychain.changePassword(to: try secure("new password"))
        #expect(try t.keychain.kdfProfile() == .interactive)
        let reopened = try Keychain.open(at: t.path, password: try secure("new password"))
        #expect(try reopened.itemCount() == 0)
    }

    // MARK: 6. check(): the whole keychain, naming what is wrong

    @Test func checkCountsAnIntactKeychain() throws {
        let t = try Self.deployKeychain()
        #expect(try t.keychain.check() == 3)
    }

    @Test func checkNamesTheRowThatDoesNotOpen() throws {
        let t = try Self.deployKeychain()
        let id = try t.sql("SELECT lower(hex(item_id)) FROM kc_items WHERE seq = 2").trimmingCharacters(in: .whitespacesAndNewlines)
        try t.sql("UPDATE kc_items SET data = substr(data, 1, 30) || randomblob(1) || substr(data, 32) WHERE seq = 2")
        do {
            _ = try t.keychain.check()
            Issue.record("check passed an edited row")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode)
            #expect(e.message.contains(id), "\(e.message)")
        }
    }
}
