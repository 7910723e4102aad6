import Foundation
import Testing
import KCTestSupport

/// Issue 32, "JSON where scripts want it": `kc totp --json`, `kc generate --json` and
/// `kc verify --json` through the real binary, their stdout parsed by JSONSerialization.
@Suite struct JSONOutputTests {
    /// Stdout as one JSON value (a failed parse fails the test with the text).
    static func parse(_ out: KCBinary.Output) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(out.stdout.utf8))
        } catch {
            Issue.record("not JSON: \(out.stdout) (stderr: \(out.stderr))")
            throw error
        }
    }

    /// A TOTP code with its seconds left and period, the same code as without --json; a
    /// HOTP code with nulls. The seed is never printed.
    @Test func totpPrintsCodeExpiryAndPeriodNeverTheSeed() throws {
        let h = try OneTimeCodeTests.home()
        let seed = OneTimeCodeTests.seed
        var out = try h.kc(["add", "-s", "vpn", "-a", "ci", "--totp", "--period", "60", "-w", seed])
        #expect(out.status == 0, "\(out.stderr)")
        let time: Int64 = 1_234_567_890   // 1_234_567_890 % 60 == 30: 30 seconds left
        out = try h.kc(["totp", "-s", "vpn", "--json"], extra: ["KC_TOTP_TIME": String(time)])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        #expect(!out.stdout.contains(seed) && !out.stdout.lowercased().contains(seed.lowercased()))
        #expect(out.stdout.hasSuffix("}\n"))
        let object = try Self.parse(out) as? [String: Any] ?? [:]
        #expect(object["code"] as? String == (try OneTimeCodeTests.code(h, ["-s", "vpn"], at: time)))
        #expect(object["type"] as? String == "totp")
        #expect(object["expires_in"] as? Int == 30)
        #expect(object["period"] as? Int == 60)
        #expect(Set(object.keys) == ["code", "type", "expires_in", "period"])

        out = try h.kc(["add", "-s", "bank", "-a", "me", "--totp", "--counter", "5", "-w", seed])
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["totp", "bank", "--json"])
        #expect(out.status == 0, "\(out.stderr)")
        let hotp = try Self.parse(out) as? [String: Any] ?? [:]
        #expect(hotp["code"] as? String == (try OneTimeCodeTests.oathtool(["-c", "5", "-b", seed])))
        #expect(hotp["type"] as? String == "hotp")
        #expect(hotp["expires_in"] is NSNull && hotp["period"] is NSNull)

        out = try h.kc(["totp", "vpn", "--json", "--clip"])
        #expect(out.status == 2 && out.stdout.isEmpty, "\(out.stderr)")
    }

    /// One object without --count, an array with it; a separator that JSON must escape
    /// comes back whole.
    @Test func generatePrintsSecretObjectsEscaped() throws {
        var out = try KCBinary.run(["generate", "--json", "--length", "32"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let one = try Self.parse(out) as? [String: Any] ?? [:]
        #expect((one["secret"] as? String)?.count == 32)
        #expect(Set(one.keys) == ["secret"])

        out = try KCBinary.run(["generate", "--json", "--count", "3", "--words", "4", "--separator", "\"\\"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let many = try Self.parse(out) as? [[String: Any]] ?? []
        #expect(many.count == 3)
        for object in many {
            let words = (object["secret"] as? String ?? "").components(separatedBy: "\"\\")
            #expect(words.count == 4 && words.allSatisfy { !$0.isEmpty }, "\(object)")
        }

        out = try KCBinary.run(["generate", "--json", "--clip"])
        #expect(out.status == 2 && out.stdout.isEmpty, "\(out.stderr)")
    }

    /// Intact: ok, the item count, no problem. Edited: exit 93 as without --json, and the
    /// problem named in "problems".
    @Test func verifyReportsOkOrTheProblemWithTheSameExitCode() throws {
        let h = try VerifyTests.deployHome()
        var out = try h.kc(["verify", "--json"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let intact = try Self.parse(out) as? [String: Any] ?? [:]
        #expect(intact["path"] as? String == h.defaultKeychain)
        #expect(intact["ok"] as? Bool == true)
        #expect(intact["items"] as? Int == 2)
        #expect((intact["problems"] as? [Any])?.isEmpty == true)

        let id = try VerifyTests.sql(h, "SELECT lower(hex(item_id)) FROM kc_items WHERE seq = 2").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // One byte of the second item's metadata changed, as VerifyTests does.
        try VerifyTests.sql(
            h,
            "UPDATE kc_items SET metadata = CAST(substr(metadata, 1, 40) || CASE WHEN substr(metadata, 41, 1) = X'00' THEN X'01' ELSE X'00' END || substr(metadata, 42) AS BLOB) WHERE seq = 2"
        )
        out = try h.kc(["verify", "--json"], password: KCHome.password)
        #expect(out.status == 93, "\(out.stderr)")
        let broken = try Self.parse(out) as? [String: Any] ?? [:]
        #expect(broken["ok"] as? Bool == false)
        #expect(broken["items"] is NSNull)
        let problems = broken["problems"] as? [String] ?? []
        #expect(problems.count == 1 && problems[0].contains(id), "\(problems)")
    }
}
