import Foundation
import Testing
@testable import KeychainCore
import KCTestSupport

/// Issue 15 through the real binary and a real agent: `kc verify`, and an agent that
/// holds a keychain for hours while someone puts an older row back into its file.
@Suite struct VerifyTests {
    /// Runs SQL on the keychain as an attacker would, with the sqlite3 tool.
    @discardableResult
    static func sql(_ h: KCHome, _ statement: String) throws -> KCBinary.Output {
        let out = try Spawn.run(["/usr/bin/sqlite3", h.defaultKeychain, statement], environment: [:])
        #expect(out.status == 0, "sqlite3: \(out.stderr)")
        return out
    }

    static func deployHome() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        for (account, secret) in [("prod", "prod-key"), ("staging", "staging-key")] {
            let out = try h.kc(["add", "-s", "deploy", "-a", account, "-w", secret], password: KCHome.password)
            #expect(out.status == 0, "\(out.stderr)")
        }
        return h
    }

    @Test func verifyPassesAnIntactKeychainInProcessAndThroughTheAgent() throws {
        let h = try Self.deployHome()
        var out = try h.kc(["verify"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr == "kc: verified \(h.defaultKeychain): 2 items, storage, schema and header intact\n")
        #expect(out.stdout.isEmpty)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        out = try h.kc(["verify"])   // no password: the agent checks it
        #expect(out.status == 0, "\(out.stderr)")
    }

    @Test func verifyNamesAnEditedRowAndExits93() throws {
        let h = try Self.deployHome()
        let id = try Self.sql(h, "SELECT lower(hex(item_id)) FROM kc_items WHERE seq = 2").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // One byte changed for sure (a random byte equals the old one once in 256 runs).
        try Self.sql(
            h,
            "UPDATE kc_items SET metadata = CAST(substr(metadata, 1, 40) || CASE WHEN substr(metadata, 41, 1) = X'00' THEN X'01' ELSE X'00' END || substr(metadata, 42) AS BLOB) WHERE seq = 2"
        )
        let out = try h.kc(["verify"], password: KCHome.password)
        #expect(out.status == 93, "\(out.stderr)")
        #expect(out.stderr.contains(id), "\(out.stderr)")
    }

    /// The attack as reported: while the agent holds the keychain, the older row of a
    /// rotated token is put back; the agent used to answer the old token with exit 0.
    @Test func theAgentDoesNotServeAReplayedRow() throws {
        let h = try Self.deployHome()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        try Self.sql(h, "ATTACH '\(h.directory)/old.db' AS o; CREATE TABLE o.saved AS SELECT * FROM main.kc_items WHERE seq = 1;")
        #expect(try h.kc(["update", "-s", "deploy", "-a", "prod", "-w", "rotated-key"]).status == 0)
        #expect(try h.kc(["find", "-s", "deploy", "-a", "prod", "-w"]).stdout == "rotated-key")
        try Self.sql(
            h,
            """
            ATTACH '\(h.directory)/old.db' AS o;
            DELETE FROM main.kc_items WHERE item_id = (SELECT item_id FROM o.saved);
            INSERT INTO main.kc_items SELECT * FROM o.saved;
            """)
        var out = try h.kc(["find", "-s", "deploy", "-a", "prod", "-w"])
        #expect(out.status == 93, "the agent answered \(out.stdout.debugDescription): \(out.stderr)")
        #expect(out.stdout.isEmpty)
        out = try h.kc(["read", "kc://deploy/prod"])
        #expect(out.status == 93 && out.stdout.isEmpty, "\(out.stderr)")
        // Export and backup through the agent refuse the file too.
        out = try h.kc(["export", "-o", h.directory + "/export.json"])
        #expect(out.status == 93, "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/export.json"))
        out = try h.kc(["backup", h.directory + "/backup.keychain-db"])
        #expect(out.status == 93, "\(out.stderr)")
        out = try h.kc(["verify"])
        #expect(out.status == 93, "\(out.stderr)")
    }

    /// The reported "first match" steering: without an account, `kc read kc://deploy`
    /// answers the first item in insertion order; swapping seq must not change that answer.
    @Test func swappingInsertionOrderDoesNotSteerAFirstMatch() throws {
        let h = try Self.deployHome()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["read", "kc://deploy"]).stdout == "prod-key")
        try Self.sql(h, "UPDATE kc_items SET seq = -seq WHERE seq IN (1, 2); UPDATE kc_items SET seq = 3 + seq WHERE seq IN (-1, -2);")
        var out = try h.kc(["read", "kc://deploy"])
        #expect(out.status == 93 && out.stdout.isEmpty, "\(out.stdout): \(out.stderr)")
        out = try h.kc(["find", "-s", "deploy", "-w"], password: KCHome.password, extra: ["KC_AGENT_DIR": h.directory + "/no-agent"])
        #expect(out.status == 93 && out.stdout.isEmpty, "\(out.stdout): \(out.stderr)")
    }

    /// A hidden item: its index column overwritten used to give exit 44.
    @Test func anItemHiddenByItsIndexColumnIsExit93NotNotFound() throws {
        let h = try Self.deployHome()
        try Self.sql(h, "UPDATE kc_items SET i_svce = randomblob(16) WHERE seq = 1")
        let out = try h.kc(["find", "-s", "deploy", "-a", "prod", "-w"], password: KCHome.password)
        #expect(out.status == 93, "\(out.stderr)")
    }
}
