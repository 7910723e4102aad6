import Foundation
import Testing
@testable import KeychainCore

/// Proof-of-concept tests from the independent security review. Each asserts the SECURE
/// behaviour: a failing test demonstrates a finding.
@Suite struct ReviewFindingsTests {
    static var github: [String: Any] { genp([kSecAttrService: "github.com", kSecAttrAccount: "alice"]) }

    static func withData(_ q: [String: Any]) -> [String: Any] {
        var q = q
        q[kSecReturnData] = true
        return q
    }

    // MARK: F1 — the data column can be set to NULL without detection

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

    // MARK: F2 — rekey launders a replayed row

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

    // MARK: F3 — a resurrected row crashes delete (UInt64 underflow)

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

    // MARK: F4 — an item can be hidden without detection (class text with a NUL)

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

    // MARK: F5 — ignore-case matching conflates different binary values

    /// `matches(_:ignoringCase:)` decodes bytes with `String(decoding:)`, which maps every
    /// invalid UTF-8 sequence to U+FFFD: account 0xFF matches a query for account 0xFE.
    @Test func ignoreCaseDoesNotConflateInvalidUTF8() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: Data([0xFF]), kSecValueData: Data("victim".utf8)]))
        expectStatus(errSecItemNotFound, "a different account must not match") {
            let r = try t.keychain.copyMatching(genp([kSecAttrService: "svc", kSecAttrAccount: Data([0xFE]),
                                                      kSecMatchCaseInsensitive: true, kSecReturnData: true]))
            Issue.record("query for account 0xFE returned \(String(describing: (r as? Data).map { String(decoding: $0, as: UTF8.self) }))")
        }
    }

    // MARK: F6 — SecItemUpdate can set the creation date

    /// DESIGN: "Creation and modification dates are always set by the core." Update skips
    /// `mdat` but applies a caller's `cdat`.
    @Test func updateDoesNotSetTheCreationDate() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        let forged = Date(timeIntervalSinceReferenceDate: 0)
        do {
            try t.keychain.update(genp([kSecAttrService: "s"]), [kSecAttrCreationDate: forged])
        } catch let e as KeychainError {
            #expect(e.status == errSecParam || e.status == errSecNoSuchAttr)
            return
        }
        let attrs = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "s", kSecReturnAttributes: true])) as? [String: Any])
        #expect(attrs[kSecAttrCreationDate] as? Date != forged, "cdat was overwritten by the caller")
    }

    // MARK: F7 — -wal / -shm modes are not checked at open

    /// Opening checks only the main file's mode; a group/other-readable -wal (which holds
    /// recent pages, including old master-key wraps) is accepted silently.
    @Test func aWorldReadableWALIsRefused() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        #expect(chmod(t.path + "-wal", 0o644) == 0)
        expectStatus(errSecParam, "a -wal readable by others") { _ = try t.reopen() }
    }
}
