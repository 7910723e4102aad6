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
        try t.sql(
            """
            \(attach) CREATE TABLE o.hidden AS SELECT * FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL;
            PRAGMA writable_schema = ON;
            DELETE FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL;
            """)
        try t.sql(
            """
            \(attach) DELETE FROM main.kc_items WHERE item_id IN (SELECT item_id FROM o.saved);
            INSERT INTO main.kc_items SELECT * FROM o.saved;
            """)
        try t.sql(
            """
            \(attach) PRAGMA writable_schema = ON;
            INSERT INTO main.sqlite_schema SELECT * FROM o.hidden;
            """)
        // The schema text is kc's again: only the rows betray the attack.
        #expect(try t.sql("SELECT count(*) FROM sqlite_schema WHERE type = 'index'").contains("12"))
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
        "DROP INDEX kc_items_acct; CREATE INDEX kc_items_acct ON kc_items(i_acct)"
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
        try t.sql(
            """
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

    @Test(arguments: [
        "i_svce", "i_acct", "i_labl", "pk", "item_id", "class", "row_version", "seq",
        "wrapped_key", "metadata", "data"
    ])
    func editingAnyColumnOfAnyRowIsDetectedAtOpen(column: String) throws {
        let t = try Self.deployKeychain()
        // The "gone" row (seq 3): not one a lookup for "deploy" reaches.
        let value: String
        switch column {
        case "class": value = "'inet'"
        case "row_version": value = "row_version + 1"
        case "seq": value = "17"
        case "item_id": value = "randomblob(16)"
        case "data", "metadata", "wrapped_key":
            value = "CAST(substr(\(column), 1, 30) || CASE WHEN substr(\(column), 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(\(column), 32) AS BLOB)"
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
    /// nothing. Since format 5 the header MAC covers them, so the edit is refused as
    /// tampering (before format 5, the compare-and-swap refused it with
    /// errSecInteractionNotAllowed).
    @Test(arguments: [false, true])
    func loweredKDFParametersAreNotUsedByPasswd(rekey: Bool) throws {
        let directory = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/moderate.keychain-db"
        let keychain = try Keychain.create(at: path, password: try secure("old"), profile: .moderate)
        try keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("v".utf8)]))
        try TempKeychain.run("/usr/bin/sqlite3", [path, "UPDATE kc_keychain SET kdf_opslimit = 2, kdf_memlimit = 67108864"])
        expectStatus(errSecDecode, "a downgraded record was accepted") {
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
        // `||` gives TEXT: cast back, so that only a byte changes.
        try t.sql(
            "UPDATE kc_items SET data = CAST(substr(data, 1, 30) || CASE WHEN substr(data, 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(data, 32) AS BLOB) WHERE seq = 2"
        )
        do {
            _ = try t.keychain.check()
            Issue.record("check passed an edited row")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode)
            #expect(e.message.contains(id), "\(e.message)")
        }
    }

    // MARK: Found by attacking the first version of this change

    /// The table stays authentic; only prod's entry leaves the service index (updated
    /// through SQL, then the index hidden while the column is put back). Lookups would
    /// skip prod and a lookup without an account would answer staging's secret.
    @Test func aStaleIndexEntryCannotHideAnItemOrSteerAFirstMatch() throws {
        let t = try Self.deployKeychain()
        let original = try t.sql("SELECT hex(i_svce) FROM kc_items WHERE seq = 1").trimmingCharacters(in: .whitespacesAndNewlines)
        try t.sql("UPDATE kc_items SET i_svce = x'00' WHERE seq = 1")
        try t.sqlWithIndexHidden("kc_items_svce", "UPDATE kc_items SET i_svce = x'\(original)' WHERE seq = 1")
        do {
            let answer = try Self.secret(t.keychain)
            Issue.record("a first match through the stale index answered \(answer ?? "nil")")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode, "\(e)")
        }
        expectDetected(t, "a stale index entry")
    }

    /// Two indexes' root pages swapped in sqlite_schema: the SQL text is kc's, every
    /// lookup by service or account would find nothing.
    @Test func swappedIndexRootPagesAreDetected() throws {
        let t = try Self.deployKeychain()
        try t.sql(
            """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET rootpage = CASE name
              WHEN 'kc_items_svce' THEN (SELECT rootpage FROM sqlite_schema WHERE name = 'kc_items_acct')
              ELSE (SELECT rootpage FROM sqlite_schema WHERE name = 'kc_items_svce') END
            WHERE name IN ('kc_items_svce', 'kc_items_acct');
            """)
        expectStatus(errSecDecode, "a fresh open") { _ = try t.reopen() }
    }

    /// A row the markers did not announce (they can be fooled: a write through a shared
    /// mapping of a page already dirty, an edit of the -shm) is still refused: every row a
    /// lookup reads must be one the last scan, or this process's own write, vouched for.
    @Test func aRowTheChangeMarkersMissedIsRefusedByTheLedger() throws {
        let t = try Self.deployKeychain()
        try Self.saveRows(t)
        try t.keychain.update(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"]), [kSecValueData: Data("rotated-key".utf8)])
        try t.sql(
            """
            ATTACH '\(t.directory)/old.db' AS o;
            DELETE FROM main.kc_items WHERE item_id = (SELECT item_id FROM o.saved WHERE seq = 1);
            INSERT INTO main.kc_items SELECT * FROM o.saved WHERE seq = 1;
            """)
        // As if the markers had not moved.
        t.keychain.verifiedStamp = try t.keychain.store.changeStamp()
        expectStatus(errSecDecode, "the open keychain served a row it never verified") { _ = try Self.secret(t.keychain, "prod") }
        // And the next request verifies the whole file again.
        #expect(t.keychain.verifiedStamp == nil)
        expectStatus(errSecDecode) { _ = try Self.secret(t.keychain, "staging") }
    }

    /// The reviewer's replay through a shared mapping: the old page is copied over the new
    /// one after the page was dirtied (so the file's change time need not move again),
    /// and SQLite's cache is flushed by reading a large item. The open keychain must not
    /// answer the old secret, whichever defence notices.
    @Test func aReplayThroughASharedMappingIsRefused() throws {
        let t = try Self.deployKeychain()
        try t.keychain.add(genp([kSecAttrService: "big", kSecValueData: Data(repeating: 0x42, count: 4 << 20)]))
        try t.keychain.store.compactLog()
        let oldMeta = try t.sql("SELECT hex(metadata) FROM kc_items WHERE seq = 1").trimmingCharacters(in: .whitespacesAndNewlines)
        let oldFile = try #require(FileManager.default.contents(atPath: t.path))
        try t.keychain.update(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"]), [kSecValueData: Data("rotated-key".utf8)])
        try t.keychain.store.compactLog()
        #expect(try Self.secret(t.keychain, "prod") == "rotated-key")
        // The page of the old row: where its metadata bytes sit in the old file.
        let needle = try #require(hexBytes(oldMeta))
        let offset = try #require(firstOffset(of: needle, in: Array(oldFile)))
        let pageSize = 4096, page = offset / pageSize * pageSize
        let fd = open(t.path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        let map = try #require(mmap(nil, Int(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
        try #require(map != MAP_FAILED)
        defer { munmap(map, Int(st.st_size)) }
        let bytes = map.assumingMemoryBound(to: UInt8.self)
        bytes[page] = bytes[page]   // dirties the page: the change time moves now
        _ = try Self.secret(t.keychain, "staging")   // the keychain notices and checks
        oldFile.withUnsafeBytes { (old: UnsafeRawBufferPointer) in
            for i in 0..<pageSize { bytes[page + i] = old[page + i] }
        }
        // The file now holds the old row (a fresh reader sees its old metadata)…
        #expect(
            try t.sql("SELECT hex(metadata) FROM kc_items WHERE seq = 1").trimmingCharacters(in: .whitespacesAndNewlines) == oldMeta,
            "the replay did not reach the file")
        // …and the open keychain's connection reads pages from the file again, not from its cache.
        try #require(t.keychain.store as? SQLiteItemStore).database.exec("PRAGMA cache_size = 1")
        _ = try? t.keychain.copyMatching(genp([kSecAttrService: "big", kSecReturnData: true]))
        do {
            let answer = try Self.secret(t.keychain, "prod")
            #expect(answer != "prod-key", "the open keychain served the replayed old secret")
            Issue.record("the replayed row was answered: \(answer ?? "nil")")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode, "\(e)")
        }
    }

    /// The file renamed over a keychain that stays open: its connection still reads the
    /// old file. Writes there would be lost; the open keychain locks instead.
    @Test func aFileReplacedByRenameIsNotFollowed() throws {
        let t = try Self.deployKeychain()
        try FileManager.default.copyItem(atPath: t.path, toPath: t.path + ".new")
        #expect(rename(t.path + ".new", t.path) == 0)
        expectStatus(errSecInteractionNotAllowed, "a write into the unlinked file") {
            try t.keychain.add(genp([kSecAttrService: "lost", kSecValueData: Data("x".utf8)]))
        }
        #expect(!t.keychain.isUnlocked)
    }

    /// A user_version kc never writes, set while the keychain is open: an error, never a trap.
    @Test(arguments: [0, -1, Int(Migrations.currentVersion) + 1, 1_000_000])
    func aCraftedSchemaVersionIsAnErrorNotACrash(version: Int) throws {
        let t = try Self.deployKeychain()
        try t.sql("PRAGMA user_version = \(version)")
        // A newer version asks for a newer kc; any other is a damaged file.
        let status = version > Migrations.currentVersion ? errSecWrongSecVersion : errSecDecode
        expectStatus(status, "check") { _ = try t.keychain.check() }
        expectStatus(status, "reopen") { _ = try t.reopen() }
    }

    /// An empty data blob (not NULL) is a damaged row, exit 93, not an internal error.
    @Test func anEmptyDataColumnIsADamagedRow() throws {
        let t = try Self.deployKeychain()
        try t.sql("UPDATE kc_items SET data = x'' WHERE seq = 3")
        expectDetected(t, "empty data")
    }
}

extension IntegrityTests {
    /// SQLite converts TEXT to BLOB silently, and a TEXT value never equals a BLOB in a
    /// lookup or a UNIQUE check: a column whose storage class changed would hide its row
    /// (and steer a first match) while its bytes still verify. Every column's class is
    /// part of what is checked.
    @Test(arguments: [
        ("i_svce", "CAST(i_svce AS TEXT)"), ("pk", "CAST(pk AS TEXT)"), ("item_id", "CAST(item_id AS TEXT)"),
        ("class", "CAST(class AS BLOB)"), ("row_version", "'v' || row_version"), ("metadata", "CAST(metadata AS TEXT)"),
        ("wrapped_key", "CAST(wrapped_key AS TEXT)"), ("data", "CAST(data AS TEXT)")
    ])
    func aColumnStoredAsAnotherTypeIsDetected(column: String, value: String) throws {
        let t = try Self.deployKeychain()
        let before = try t.sql("SELECT typeof(\(column)) FROM kc_items WHERE seq = 1")
        try t.sql("UPDATE kc_items SET \(column) = \(value) WHERE seq = 1")
        #expect(try t.sql("SELECT typeof(\(column)) FROM kc_items WHERE seq = 1") != before, "the edit did not change the type")
        do {
            let answer = try Self.secret(t.keychain)
            Issue.record("a first match answered \(answer ?? "nil") with \(column) retyped")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode, "\(e)")
        }
        expectDetected(t, "\(column) retyped")
    }

    /// The data of a row edited after the last scan without the markers moving: a delete
    /// (or an update with a new secret) must not fold the edited bytes out of the header,
    /// which would leave an accumulator no file can match (the keychain bricked). It is
    /// refused, and once the byte is put back the keychain is whole.
    @Test func dataEditedUnderTheLedgerIsNotFoldedOutOfTheHeader() throws {
        let t = try Self.deployKeychain()
        let original = try t.sql("SELECT hex(data) FROM kc_items WHERE seq = 1").trimmingCharacters(in: .whitespacesAndNewlines)
        try t.sql(
            "UPDATE kc_items SET data = CAST(substr(data, 1, 30) || CASE WHEN substr(data, 31, 1) = X'00' THEN X'01' ELSE X'00' END || substr(data, 32) AS BLOB) WHERE seq = 1"
        )
        t.keychain.verifiedStamp = try t.keychain.store.changeStamp()   // as if the markers had not moved
        expectStatus(errSecDecode, "a delete folded unverified data out of the header") {
            try t.keychain.delete(genp([kSecAttrService: "deploy", kSecAttrAccount: "prod"]))
        }
        try t.sql("UPDATE kc_items SET data = x'\(original)' WHERE seq = 1")
        let reopened = try t.reopen()
        #expect(try reopened.check() == 3)
        #expect(try Self.secret(reopened, "prod") == "prod-key")
    }
}

private func hexBytes(_ hex: String) -> [UInt8]? {
    var out: [UInt8] = []
    var chars = Array(hex.utf8)[...]
    while chars.count >= 2 {
        guard let b = UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16) else { return nil }
        out.append(b)
        chars = chars.dropFirst(2)
    }
    return out.isEmpty ? nil : out
}

private func firstOffset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle {
        return i
    }
    return nil
}
