import Foundation
import Testing
@testable import KeychainCore

/// An attacker holding (and able to write) the keychain file edits it with the sqlite3
/// tool. Every edit must be refused with an error; no wrong item or secret may come back.
@Suite struct TamperTests {
    /// A keychain with two generic passwords (seq 1 "alice"@github.com, seq 2
    /// "mallory"@attacker.example) and an internet password (seq 3).
    static func twoItems() throws -> TempKeychain {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("github-token".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "attacker.example", kSecAttrAccount: "mallory", kSecValueData: Data("attacker".utf8)]))
        try t.keychain.add([
            kSecClass: kSecClassInternetPassword, kSecAttrServer: "mail.example", kSecAttrAccount: "alice",
            kSecValueData: Data("mail-pw".utf8)
        ])
        return t
    }

    static var allGeneric: [String: Any] { genp([kSecMatchLimit: kSecMatchLimitAll, kSecReturnData: true, kSecReturnAttributes: true]) }

    static var github: [String: Any] { genp([kSecAttrService: "github.com", kSecAttrAccount: "alice"]) }

    static func withData(_ q: [String: Any]) -> [String: Any] {
        var q = q
        q[kSecReturnData] = true
        return q
    }

    /// Neither the current keychain object nor a fresh open returns anything after the edit.
    func expectRefused(
        _ t: TempKeychain, _ what: String, _ query: [String: Any] = TamperTests.allGeneric,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let result = try t.keychain.copyMatching(query)
            Issue.record("\(what): the tampered keychain answered \(type(of: result))", sourceLocation: sourceLocation)
        } catch let e as KeychainError {
            #expect([errSecDecode, errSecAuthFailed].contains(e.status), "\(what): \(e)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
        }
        do {
            let k = try t.reopen()
            let result = try k.copyMatching(query)
            Issue.record("\(what): reopened, the tampered keychain answered \(type(of: result))", sourceLocation: sourceLocation)
        } catch let e as KeychainError {
            #expect([errSecDecode, errSecAuthFailed].contains(e.status), "\(what) (reopened): \(e)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["data", "metadata", "wrapped_key", "item_id", "row_version", "pk", "i_svce", "i_acct", "i_labl"])
    func swappingAColumnBetweenRowsIsDetected(column: String) throws {
        let t = try Self.twoItems()
        try t.sql(
            """
            CREATE TEMP TABLE saved AS SELECT seq, \(column) AS v FROM kc_items WHERE seq IN (1, 2);
            UPDATE kc_items SET \(column) = -seq WHERE seq IN (1, 2);
            UPDATE kc_items SET \(column) = (SELECT v FROM saved WHERE saved.seq = 3 - kc_items.seq) WHERE seq IN (1, 2);
            """)
        expectRefused(t, "swapped \(column)")
    }

    /// Only the 24-byte nonces of two rows' data (and then of their metadata) exchanged,
    /// the ciphertexts left in place.
    @Test(arguments: ["data", "metadata"])
    func swappingOnlyTheNoncesIsDetected(column: String) throws {
        let t = try Self.twoItems()
        try t.sql(
            """
            CREATE TEMP TABLE saved AS SELECT seq, substr(\(column), 1, 24) AS nonce, substr(\(column), 25) AS rest
              FROM kc_items WHERE seq IN (1, 2);
            UPDATE kc_items SET \(column) = (SELECT o.nonce FROM saved o WHERE o.seq = 3 - kc_items.seq)
                                         || (SELECT m.rest FROM saved m WHERE m.seq = kc_items.seq) WHERE seq IN (1, 2);
            """)
        expectRefused(t, "swapped \(column) nonces")
    }

    /// The -wal of a keychain that a live process (an agent) holds open is deleted: a fresh
    /// process opens the main file as it was at the last checkpoint, a consistent older
    /// state it cannot tell from a restored copy; a process that saw the newer generation
    /// refuses it (docs/security.md, "Rollback").
    @Test func deletingTheWALOfALiveKeychain() throws {
        let t = try Self.twoItems()
        try t.keychain.store.compactLog()
        let checkpointed = try t.keychain.itemCount()
        let seen = t.keychain.generation
        try t.keychain.add(genp([kSecAttrService: "after-checkpoint", kSecValueData: Data("new".utf8)]))
        let seenAfter = t.keychain.generation
        #expect(seenAfter > seen)
        #expect(FileManager.default.fileExists(atPath: t.path + "-wal"))
        try FileManager.default.removeItem(atPath: t.path + "-wal")
        // A fresh process gets either a refusal (SQLite notices the log it was using is
        // gone: errSecIO) or the older, consistent state; never a wrong item.
        do {
            let fresh = try t.reopen()
            try fresh.verify()
            #expect(try fresh.itemCount() == checkpointed)
            #expect(throws: KeychainError.self) {
                try fresh.copyMatching(genp([kSecAttrService: "after-checkpoint", kSecReturnData: true]))
            }
        } catch let error as KeychainError {
            #expect([errSecIO, errSecDecode].contains(error.status), "\(error)")
        }
        // A process that remembers the newer generation (as the agent does) never accepts
        // the older state.
        do {
            let remembering = try Keychain.open(at: t.path, password: try secure(TempKeychain.password), minimumGeneration: seenAfter)
            let count = try remembering.itemCount()
            Issue.record("the older state was accepted (\(count) items)")
        } catch let error as KeychainError {
            #expect([errSecIO, errSecDecode].contains(error.status), "\(error)")
        }
    }

    /// Review C1: copy the attacker item's server index onto the victim row, then look the
    /// attacker's name up: the victim's secret must not come back.
    @Test func indexCopiedFromAnotherRowNeverSelectsIt() throws {
        let t = try Self.twoItems()
        try t.sql(
            "UPDATE kc_items SET i_svce = (SELECT i_svce FROM kc_items WHERE seq = 2), i_acct = (SELECT i_acct FROM kc_items WHERE seq = 2) WHERE seq = 1")
        try t.sql("DELETE FROM kc_items WHERE seq = 2")
        expectRefused(t, "copied index", genp([kSecAttrService: "attacker.example", kSecAttrAccount: "mallory", kSecReturnData: true]))
    }

    @Test func movingARowToAnotherClassIsDetected() throws {
        let t = try Self.twoItems()
        try t.sql("UPDATE kc_items SET class = 'inet' WHERE seq = 1")
        expectRefused(t, "class edited", [kSecClass: kSecClassInternetPassword, kSecMatchLimit: kSecMatchLimitAll, kSecReturnData: true])
        try t.sql("UPDATE kc_items SET class = 'genp' WHERE seq = 1; UPDATE kc_items SET class = 'genp' WHERE seq = 3")
        expectRefused(t, "inet row relabelled genp")
    }

    @Test(arguments: ["data", "metadata", "wrapped_key"])
    func flippingAnyByteOfACiphertextIsDetected(column: String) throws {
        let t = try Self.twoItems()
        let hex = try t.sql("SELECT hex(\(column)) FROM kc_items WHERE seq = 1").trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = try KeyHierarchyTests.hex(hex)
        // First nonce byte, first ciphertext byte, middle, last tag byte.
        for offset in [0, 24, bytes.count / 2, bytes.count - 1] {
            var bad = bytes
            bad[offset] ^= 0x80
            try t.sql("UPDATE kc_items SET \(column) = X'\(bad.map { String(format: "%02X", $0) }.joined())' WHERE seq = 1")
            expectRefused(t, "\(column) byte \(offset)", genp([kSecAttrService: "github.com", kSecReturnData: true]))
        }
    }

    @Test func deletingARowIsDetected() throws {
        let t = try Self.twoItems()
        try t.sql("DELETE FROM kc_items WHERE seq = 2")
        expectStatus(errSecDecode) { _ = try t.reopen() }
        expectStatus(errSecDecode) { try t.keychain.verify() }
    }

    @Test func insertingACopiedRowIsDetected() throws {
        let t = try Self.twoItems()
        try t.sql(
            """
            INSERT INTO kc_items(item_id, class, row_version, pk, i_acct, i_svce, i_labl, i_agrp, wrapped_key, metadata, data)
            SELECT randomblob(16), class, row_version, randomblob(32), i_acct, i_svce, i_labl, i_agrp, wrapped_key, metadata, data
            FROM kc_items WHERE seq = 1
            """)
        expectStatus(errSecDecode) { _ = try t.reopen() }
    }

    /// Replay: an old version of a row put back after the item changed.
    @Test func replayingAnOldRowVersionIsDetected() throws {
        let t = try Self.twoItems()
        try t.sql("CREATE TABLE old AS SELECT * FROM kc_items WHERE seq = 1")
        try t.keychain.update(genp([kSecAttrService: "github.com"]), [kSecValueData: Data("rotated-token".utf8)])
        try t.sql("DELETE FROM kc_items WHERE seq = 1; INSERT INTO kc_items SELECT * FROM old; DROP TABLE old")
        expectStatus(errSecDecode, "old row under the new header") { _ = try t.reopen() }
    }

    @Test func editingTheHeaderStateIsDetected() throws {
        for edit in [
            "UPDATE kc_state SET item_count = item_count - 1", "UPDATE kc_state SET generation = generation + 5",
            "UPDATE kc_state SET idle_timeout = 0, max_timeout = 0", "UPDATE kc_state SET accumulator = zeroblob(32)",
            "UPDATE kc_state SET min_writer_version = 9"
        ] {
            let t = try Self.twoItems()
            try t.sql(edit)
            expectStatus(errSecDecode, edit) { _ = try t.reopen() }
            expectStatus(errSecDecode, edit) { try t.keychain.add(genp([kSecAttrService: "new"])) }
            #expect(try t.sql("SELECT count(*) FROM kc_items").trimmingCharacters(in: .whitespacesAndNewlines) == "3", "nothing was written")
        }
    }

    /// Lowered or inflated KDF parameters: refused before any derivation, or the wrap no
    /// longer opens (its associated data binds the parameters).
    @Test func tamperedKDFParametersAreRefused() throws {
        let cases: [(String, OSStatus)] = [
            ("UPDATE kc_keychain SET kdf_opslimit = 1", errSecDecode),
            ("UPDATE kc_keychain SET kdf_memlimit = 8192", errSecDecode),
            ("UPDATE kc_keychain SET kdf_memlimit = 4398046511104", errSecDecode),
            ("UPDATE kc_keychain SET kdf_algorithm = 1", errSecDecode),
            ("UPDATE kc_keychain SET kdf_opslimit = 3", errSecAuthFailed),
            ("UPDATE kc_keychain SET kdf_salt = zeroblob(16)", errSecAuthFailed),
            ("UPDATE kc_keychain SET key_generation = 2", errSecAuthFailed),
            ("UPDATE kc_keychain SET keychain_id = randomblob(16)", errSecAuthFailed)
        ]
        for (edit, status) in cases {
            let t = try Self.twoItems()
            try t.sql(edit)
            expectStatus(status, edit) { _ = try t.reopen() }
        }
    }

    @Test func anotherKeychainsWrappedMasterKeyIsRefused() throws {
        let a = try Self.twoItems()
        let b = try TempKeychain()   // same password, different keychain
        let wrap = try b.sql("SELECT hex(wrapped_master_key) FROM kc_keychain").trimmingCharacters(in: .whitespacesAndNewlines)
        try a.sql("UPDATE kc_keychain SET wrapped_master_key = X'\(wrap)'")
        expectStatus(errSecAuthFailed) { _ = try a.reopen() }
        // Even with its id, salt and parameters copied as well, the header MAC and the
        // rows belong to the other master key.
        try a.sql(
            "ATTACH '\(b.path)' AS b; UPDATE main.kc_keychain SET (keychain_id, kdf_salt, kdf_opslimit, kdf_memlimit, wrapped_master_key) = (SELECT keychain_id, kdf_salt, kdf_opslimit, kdf_memlimit, wrapped_master_key FROM b.kc_keychain)"
        )
        expectStatus(errSecDecode) { _ = try a.reopen() }
    }

    // MARK: Found by the independent security review (F1–F4): a row stripped, put back or
    // relabelled while a Keychain (the agent) stays open.

    /// DESIGN: "Editing any column of a row must fail to decrypt." Nothing binds the
    /// presence of `data`: setting it to NULL makes the item look secret-less, and an
    /// attribute-only update then re-seals it without data (the secret is silently lost).
    @Test func nullingTheDataColumnIsDetected() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("github-token".utf8)]))
        try t.sql("UPDATE kc_items SET data = NULL")
        expectStatus(errSecDecode, "a stripped secret must not look like an item without data") {
            let r = try t.keychain.copyMatching(Self.withData(Self.github))
            Issue.record("copyMatching answered \(String(describing: r)) for an item whose data was stripped")
        }
        expectStatus(errSecDecode, "reopened") {
            _ = try t.reopen().copyMatching(Self.withData(Self.github))
        }
        expectStatus(errSecDecode, "an update must not re-seal the stripped item as data-less") {
            try t.keychain.update(Self.github, [kSecAttrLabel: "relabelled"])
        }
    }

    /// An old version of a row put back while a Keychain is open: `rekey` rebuilds the
    /// accumulator from whatever rows it finds (it checks only the count), blessing the
    /// replayed row under the new master key; afterwards open/verify pass and the old
    /// (revoked) secret comes back.
    @Test func rekeyRefusesAReplayedRow() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("old-token".utf8)]))
        try t.sql("CREATE TABLE old AS SELECT * FROM kc_items")
        try t.keychain.update(Self.github, [kSecValueData: Data("new-token".utf8)])
        try t.sql("DELETE FROM kc_items; INSERT INTO kc_items SELECT * FROM old; DROP TABLE old")
        expectStatus(errSecDecode, "re-key must check the accumulator before rebuilding it") {
            try t.keychain.rekey(newPassword: try secure("rekeyed"), profile: .interactive)
        }
        if let k = try? t.reopen(password: "rekeyed") {
            let secret = try? k.copyMatching(Self.withData(Self.github)) as? Data
            #expect(secret != Data("old-token".utf8), "the replayed (revoked) secret is served after re-key")
        }
    }

    /// A deleted row put back while a Keychain (the agent) stays open decrypts fine; deleting
    /// it again runs `state.itemCount -= 1` on 0, a Swift arithmetic trap. Run in a child
    /// process: a crash must not take the whole test run down.
    @Test func deletingAResurrectedRowDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            do {
                let t = try TempKeychain()
                try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("x".utf8)]))
                try t.sql("CREATE TABLE old AS SELECT * FROM kc_items")
                try t.keychain.delete(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice"]))
                try t.sql("INSERT INTO kc_items SELECT * FROM old; DROP TABLE old")
                try t.keychain.delete(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice"]))
            } catch {
                // Any thrown error (errSecDecode) is acceptable; a trap is not.
            }
        }
    }

    /// `Statement.text` reads the class with `String(cString:)`, so `'genp' || X'00' || 'x'`
    /// reads back as "genp": the AD and the accumulator term still match (open and verify
    /// pass), but `WHERE class = 'genp'` never selects the row again. The item vanishes
    /// silently and the UNIQUE (class, pk) constraint no longer stops a duplicate.
    @Test func hidingARowByEditingItsClassIsDetected() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("github-token".utf8)]))
        try t.sql("UPDATE kc_items SET class = CAST(X'67656E700078' AS TEXT)")
        expectStatus(errSecDecode, "verify must notice a class that is not exactly one of the four codes") {
            try t.keychain.verify()
        }
        expectStatus(errSecDecode, "reopen") { _ = try t.reopen() }
        do {
            _ = try t.keychain.copyMatching(Self.withData(Self.github))
        } catch let e as KeychainError {
            #expect(e.status != errSecItemNotFound, "the item vanished silently (errSecItemNotFound, not errSecDecode)")
        }
        // The open keychain noticed the edit (issue 15): a tampered file takes no write at all,
        // so the hidden row can never let a second item with its primary key in.
        expectStatus(errSecDecode, "a write went ahead on a file edited under the open keychain") {
            try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("second".utf8)]))
        }
    }
}
