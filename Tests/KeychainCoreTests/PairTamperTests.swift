import Foundation
import Testing
@testable import KeychainCore

/// An attacker holding the keychain file edits the Secret Service pair index (`kc_pairs`,
/// format 3) with the sqlite3 tool: a pair row deleted, added, moved to another item,
/// edited, orphaned, or left stale in the fingerprint index. Each edit is refused by the
/// open keychain (as the agent holds it), by a fresh open and by `kc verify`.
@Suite struct PairTamperTests {
    static let map = kcAttrSecretServiceAttributes

    /// seq 1: git "alice"@github.com, seq 2: git "alice"@gitlab.com, both with maps; seq 3:
    /// a plain item.
    static func keychain() throws -> TempKeychain {
        let t = try TempKeychain()
        for (server, secret) in [("github.com", "gh-token"), ("gitlab.com", "gl-token")] {
            try t.keychain.add(
                genp([
                    kSecAttrService: "git", kSecAttrAccount: server, Self.map: ["server": server, "user": "alice"],
                    kSecValueData: Data(secret.utf8)
                ]))
        }
        try t.keychain.add(genp([kSecAttrService: "plain", kSecValueData: Data("plain".utf8)]))
        return t
    }

    /// The secret of the first item holding `pairs`.
    static func secret(_ k: Keychain, _ pairs: [String: String] = ["user": "alice"]) throws -> String? {
        (try k.copyMatching(genp([Self.map: pairs, kSecReturnData: true])) as? Data).map { String(decoding: $0, as: UTF8.self) }
    }

    /// errSecDecode from the open keychain, from a fresh open and from `check()`.
    func expectDetected(
        _ t: TempKeychain, _ what: String, _ pairs: [String: String] = ["user": "alice"],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectStatus(errSecDecode, "\(what): the open keychain answered", sourceLocation: sourceLocation) { _ = try Self.secret(t.keychain, pairs) }
        expectStatus(errSecDecode, "\(what): a fresh open accepted the file", sourceLocation: sourceLocation) { _ = try t.reopen() }
        expectStatus(errSecDecode, "\(what): kc verify passed", sourceLocation: sourceLocation) { _ = try t.keychain.check() }
    }

    /// The hex of seq 1's first pair fingerprint.
    static func firstPair(_ t: TempKeychain) throws -> String {
        try t.sql("SELECT hex(fp) FROM kc_pairs WHERE seq = 1 ORDER BY fp LIMIT 1").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theUntouchedFileAnswers() throws {
        let t = try Self.keychain()
        #expect(try Self.secret(t.keychain) == "gh-token")
        #expect(try Self.secret(t.keychain, ["server": "gitlab.com"]) == "gl-token")
        #expect(try t.reopen().check() == 3)
        #expect(try t.sql("SELECT seq, count(*) FROM kc_pairs GROUP BY seq") == "1|2\n2|2\n")
    }

    @Test(arguments: [
        ("a pair row deleted", "DELETE FROM kc_pairs WHERE seq = 1 AND fp = x'@'"),
        ("every pair row deleted", "DELETE FROM kc_pairs"),
        ("a pair row added to a plain item", "INSERT INTO kc_pairs VALUES (3, x'@')"),
        ("a pair row of no item", "INSERT INTO kc_pairs VALUES (99, x'@')"),
        ("a pair row moved to another item", "UPDATE kc_pairs SET seq = 3 WHERE seq = 1 AND fp = x'@'"),
        ("the pairs of two items swapped", "UPDATE kc_pairs SET seq = -seq WHERE seq IN (1, 2); UPDATE kc_pairs SET seq = 3 + seq WHERE seq IN (-1, -2)"),
        ("a fingerprint edited", "UPDATE kc_pairs SET fp = randomblob(16) WHERE seq = 1 AND fp = x'@'"),
        ("a fingerprint stored as text", "UPDATE kc_pairs SET fp = CAST(fp AS TEXT) WHERE seq = 1 AND fp = x'@'"),
        ("a seq stored as text", "UPDATE kc_pairs SET seq = '1x' WHERE seq = 1 AND fp = x'@'")
    ])
    func anEditOfThePairTableIsDetected(what: String, sql: String) throws {
        let t = try Self.keychain()
        #expect(try Self.secret(t.keychain) == "gh-token")
        try t.sql(sql.replacingOccurrences(of: "@", with: try Self.firstPair(t)))
        expectDetected(t, what)
    }

    /// The pair table stays authentic; only one entry of its fingerprint index is stale (the
    /// index hidden from SQLite while the row is put back). A search by that pair would skip
    /// github.com's item and answer gitlab.com's as the first match.
    @Test func aStaleEntryOfThePairIndexCannotHideAnItemOrSteerAFirstMatch() throws {
        let t = try Self.keychain()
        let user = try t.sql("SELECT hex(fp) FROM kc_pairs WHERE seq = 1 AND fp IN (SELECT fp FROM kc_pairs WHERE seq = 2)")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try t.sql("UPDATE kc_pairs SET fp = x'00' WHERE seq = 1 AND fp = x'\(user)'")
        try t.sqlWithIndexHidden("kc_pairs_fp", "UPDATE kc_pairs SET fp = x'\(user)' WHERE seq = 1 AND fp = x'00'")
        do {
            let answer = try Self.secret(t.keychain)
            Issue.record("a first match through the stale index answered \(answer ?? "nil")")
        } catch let e as KeychainError {
            #expect(e.status == errSecDecode, "\(e)")
        }
        expectDetected(t, "a stale pair index entry")
    }

    /// A pair row of no item slipped into the table while its index was hidden: lookups
    /// never meet it, but it is a stored row no item vouches for (and a later item given
    /// that seq would inherit it). The integrity scan reads the table itself.
    @Test func aPairRowHiddenFromTheIndexIsDetected() throws {
        let t = try Self.keychain()
        try t.sqlWithIndexHidden("kc_pairs_fp", "INSERT INTO kc_pairs VALUES (4, x'\(try Self.firstPair(t))')")
        expectDetected(t, "a hidden pair row of no item")
    }

    /// The pair table and its index belong to the pinned schema.
    @Test(arguments: ["DROP INDEX kc_pairs_fp", "CREATE INDEX extra ON kc_pairs(seq)", "DROP TABLE kc_pairs"])
    func aChangedPairSchemaIsRefused(sql: String) throws {
        let t = try Self.keychain()
        try t.sql(sql)
        expectStatus(errSecDecode) { _ = try t.reopen() }
    }

    /// A whole row replayed with its old pairs after its map changed: the row and its pairs
    /// are authentic, and older than the header.
    @Test func aRowReplayedWithItsOldPairsIsDetected() throws {
        let t = try Self.keychain()
        try t.sql(
            "ATTACH '\(t.directory)/old.db' AS o; CREATE TABLE o.items AS SELECT * FROM kc_items WHERE seq = 1; CREATE TABLE o.pairs AS SELECT * FROM kc_pairs WHERE seq = 1;"
        )
        #expect(try t.keychain.update(genp([Self.map: ["server": "github.com"]]), [Self.map: ["server": "github.com", "user": "bob"]]) == 1)
        try t.sql(
            """
            ATTACH '\(t.directory)/old.db' AS o;
            DELETE FROM main.kc_pairs WHERE seq = 1; INSERT INTO main.kc_pairs SELECT * FROM o.pairs;
            DELETE FROM main.kc_items WHERE seq = 1; INSERT INTO main.kc_items SELECT * FROM o.items;
            """)
        expectDetected(t, "a replayed row with its old pairs")
    }
}
