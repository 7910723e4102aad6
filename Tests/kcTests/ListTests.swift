import Foundation
import Testing
import KCTestSupport

/// `kc list` (issue 19, "A readable listing"; issue 21: the "no item matches" hint pointed at
/// `kc find --all`, which lists generic passwords only, so after importing a browser's CSV
/// of internet passwords it led to another exit 44).
@Suite struct ListTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").path

    /// A keychain with items of every class: a browser CSV's logins (internet passwords),
    /// generic passwords, a certificate and a key.
    static func stocked() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        let csv =
            "name,url,username,password,note\ngithub.com,https://github.com/login,alice,web-secret-1,\n"
            + "Mail,https://mail.example.org/,bob@example.org,web-secret-2,\n"
        try csv.write(toFile: h.directory + "/chrome.csv", atomically: true, encoding: .utf8)
        var out = try h.kc(["import", "--format", "chrome-csv", h.directory + "/chrome.csv"], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        for (service, account) in [("github.com", "alice"), ("api.example.com", "deploy"), ("Zeta", "z")] {
            out = try h.kc(["add", "-s", service, "-a", account, "-w", "generic-secret-\(account)"], password: pw)
            #expect(out.status == 0, "\(out.stderr)")
        }
        #expect(try h.kc(["add", "--class", "certificate", "--data-file", vectors + "/cert-ec-v3.der", "-l", "ec cert"], password: pw).status == 0)
        #expect(try h.kc(["add", "--class", "key", "--tag", "com.example.rsa", "--data-file", vectors + "/key-rsa-3072.pem"], password: pw).status == 0)
        return h
    }

    @Test func listsEveryClassOneTabSeparatedLineEachSortedWithoutSecrets() throws {
        let h = try Self.stocked()
        let out = try h.kc(["list"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0.components(separatedBy: "\t") }
        #expect(lines.allSatisfy { $0.count == 5 }, "five tab-separated fields, no header: \(out.stdout)")
        #expect(
            lines.map { Array($0.prefix(4)) } == [
                ["generic", "api.example.com", "deploy", "api.example.com"],
                ["generic", "github.com", "alice", "github.com"],
                ["generic", "Zeta", "z", "Zeta"],
                ["internet", "github.com", "alice", "github.com"],
                ["internet", "mail.example.org", "bob@example.org", "Mail"],
                ["certificate", "O=kc, CN=kc EC Test", "", "ec cert"],
                ["key", "com.example.rsa", "", ""]
            ], "\(out.stdout)")
        let iso = try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#)
        #expect(lines.allSatisfy { $0[4].wholeMatch(of: iso) != nil }, "modified, ISO 8601 UTC")
        #expect(!out.stdout.contains("secret"), "never a secret")

        // --json: the same items as `kc find --json` objects, no data.
        let json = try h.kc(["list", "--json"], password: KCHome.password)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.map { $0["class"] as? String } == ["generic", "generic", "generic", "internet", "internet", "certificate", "key"])
        #expect(array.allSatisfy { $0["data"] == nil } && !json.stdout.contains("secret"))
        #expect((array[3]["attributes"] as? [String: Any])?["server"] as? String == "github.com")
    }

    @Test func attributeFlagsAndClassNarrowIt() throws {
        let h = try Self.stocked()
        let pw = KCHome.password
        func listed(_ arguments: [String]) throws -> [String] {
            let out = try h.kc(["list"] + arguments, password: pw)
            #expect(out.status == 0, "\(arguments): \(out.stderr)")
            return out.stdout.split(separator: "\n").map { $0.components(separatedBy: "\t").prefix(3).joined(separator: " ") }
        }
        #expect(try listed(["-s", "github.com"]) == ["generic github.com alice", "internet github.com alice"], "service or server")
        #expect(try listed(["--class", "internet"]) == ["internet github.com alice", "internet mail.example.org bob@example.org"])
        #expect(try listed(["-a", "alice", "--class", "internet"]) == ["internet github.com alice"])
        #expect(try listed(["-l", "ec cert"]) == ["certificate O=kc, CN=kc EC Test "], "a label reaches every class")
        #expect(try listed(["--tag", "com.example.rsa"]) == ["key com.example.rsa "])

        var out = try h.kc(["list", "-a", "nobody"], password: pw)
        #expect(out.status == 44, "\(out.stderr)")
        #expect(
            out.stderr == "kc: no item matches account=nobody in \(h.defaultKeychain)\nkc: hint: `kc list` with no attribute lists every item\n",
            "\(out.stderr)")
        out = try h.kc(["list", "--class", "certificate", "-a", "alice"], password: pw)
        #expect(out.status == 41 && out.stderr.contains("-a/--account is not an attribute of certificate items"), "\(out.stderr)")
    }

    @Test func anEmptyKeychainIsExit44WithWhatToDo() throws {
        let h = try KCHome()
        try h.createKeychain()
        for arguments in [["list"], ["list", "--json"]] {
            let out = try h.kc(arguments, password: KCHome.password)
            #expect(out.status == 44 && out.stdout.isEmpty, "\(arguments)")
            #expect(
                out.stderr == "kc: there are no items in \(h.defaultKeychain)\n"
                    + "kc: hint: add one with `kc add -s SERVICE -a ACCOUNT`, or bring them in with `kc import FILE`\n", "\(out.stderr)")
        }
        #expect(try h.kc(["add", "-s", "only", "-w", "x"], password: KCHome.password).status == 0)
        let out = try h.kc(["list", "--class", "key"], password: KCHome.password)
        #expect(out.status == 44 && out.stderr.hasPrefix("kc: there are no key items in "), "\(out.stderr)")
        #expect(try h.kc(["list", "-k", "nosuch"], password: KCHome.password).status == 50)
    }

    /// On a terminal: a header, aligned columns, cut to the width with "…".
    @Test func onATerminalColumnsAreAlignedAndFitTheWidth() throws {
        let h = try Self.stocked()
        #expect(
            try h.kc(
                [
                    "add", "-s", "a-very-long-service-name-that-does-not-fit.example.com", "-a", "someone-with-a-long-account-name",
                    "-w", "x"
                ], password: KCHome.password
            ).status == 0)
        let env = ["KC_PASSWORD": KCHome.password, "COLUMNS": "72"]
        var s = try TerminalTests().drive(h, ["list"], [], env: env)
        #expect(s.status == 0, "\(s.screen)")
        let rows = s.screen.components(separatedBy: "\r\n").filter { !$0.isEmpty }.map { Array($0) }
        #expect(rows.first.map { String($0).hasPrefix("CLASS") } == true && rows.count == 9, "\(s.screen)")
        #expect(rows.allSatisfy { $0.count <= 72 }, "cut to 72 columns: \(rows.map(\.count))")
        #expect(s.screen.contains("a-very-lon") && s.screen.contains("…") && !s.screen.contains("does-not-fit"), "the long cells cut: \(s.screen)")
        // Every column starts at the same place on every line, two spaces after the one before.
        for header in ["SERVICE", "ACCOUNT", "LABEL", "MODIFIED"] {
            let at = try #require(String(rows[0]).range(of: header)).lowerBound.utf16Offset(in: String(rows[0]))
            for row in rows {
                #expect(row.count > at && row[at - 2] == " " && row[at - 1] == " ", "\(header) at \(at) in \(String(row))")
            }
        }
        let iso = try Regex(#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#)
        #expect(
            rows.dropFirst().allSatisfy { String($0).suffix(20).wholeMatch(of: iso) != nil },
            "the dates are whole, at the end")
        #expect(!s.screen.contains("secret"))
        // Without a width, nothing is cut.
        s = try TerminalTests().drive(h, ["list"], [], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.screen.contains("a-very-long-service-name-that-does-not-fit.example.com  someone-with-a-long-account-name"), "\(s.screen)")
        #expect(!s.screen.contains("…"))
    }

    /// `kc find --all` on a terminal lists as `kc list` does (one line per item, sorted);
    /// in a pipe it keeps its blocks of attributes, and -g keeps them on a terminal too.
    @Test func findAllOnATerminalIsAListing() throws {
        let h = try Self.stocked()
        let env = ["KC_PASSWORD": KCHome.password]
        let listed = try TerminalTests().drive(h, ["list", "--class", "generic"], [], env: env)
        let found = try TerminalTests().drive(h, ["find", "--all"], [], env: env)
        #expect(found.status == 0 && listed.status == 0, "\(found.screen)")
        #expect(found.screen.hasPrefix("CLASS") && found.screen == listed.screen, "\(found.screen)\n---\n\(listed.screen)")
        let piped = try h.kc(["find", "--all"], password: KCHome.password)
        #expect(piped.status == 0 && !piped.stdout.hasPrefix("CLASS") && piped.stdout.contains("service: "), "\(piped.stdout)")
        let withSecrets = try TerminalTests().drive(h, ["find", "--all", "-g"], [], env: env)
        #expect(!withSecrets.screen.hasPrefix("CLASS") && withSecrets.screen.contains("secret"), "\(withSecrets.screen)")
    }

    /// The issue's path: a browser CSV brought internet passwords in; the "no item matches"
    /// hint of find, delete and read now points at `kc list`, which shows them.
    @Test func theNoMatchHintPointsAtKcListWhichShowsImportedLogins() throws {
        let h = try Self.stocked()
        let pw = KCHome.password
        for arguments in [["find", "-s", "mail.example.org", "-w"], ["delete", "-s", "mail.example.org"], ["read", "kc://mail.example.org/bob"]] {
            let out = try h.kc(arguments, password: pw)
            #expect(out.status == 44, "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains("kc: hint: list what is there with `kc list`") && !out.stderr.contains("find --all"), "\(arguments): \(out.stderr)")
        }
        let out = try h.kc(["list"], password: pw)
        #expect(out.status == 0 && out.stdout.contains("internet\tmail.example.org\tbob@example.org\tMail\t"), "\(out.stdout)")
        let ls = try h.kc(["ls"])
        #expect(ls.status == 2 && ls.stderr.hasPrefix("kc: unknown command 'ls'; did you mean 'list'?"), "\(ls.stderr)")
    }
}
