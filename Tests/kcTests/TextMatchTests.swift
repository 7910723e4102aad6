import Foundation
import Testing
import KCTestSupport

/// Issue 21: substring and prefix search (`--contains`, `--prefix`), alone and with
/// `--ignore-case`, in find, update and delete, through the real binary, in-process and
/// through the agent.
@Suite struct TextMatchTests {
    /// A home with four generic passwords whose services share "git" in different places.
    static func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        for (service, account) in [("github.com", "alice"), ("gitlab.example", "bob"), ("my-git", "carol"), ("GitHub.io", "dave")] {
            let out = try h.kc(["add", "-s", service, "-a", account, "-w", "s-" + account], password: KCHome.password)
            #expect(out.status == 0, "\(out.stderr)")
        }
        return h
    }

    /// The accounts `kc find ARGS --all` lists, sorted; [] for exit 44.
    static func accounts(_ h: KCHome, _ arguments: [String], password: String?) throws -> [String] {
        let out = try h.kc(["find"] + arguments + ["--all", "--json"], password: password)
        if out.status == 44 { return [] }
        #expect(out.status == 0, "\(arguments): \(out.stderr)")
        let items = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []
        return items.compactMap { ($0["attributes"] as? [String: Any])?["account"] as? String }.sorted()
    }

    /// Every combination on one keychain, first opened in-process (KC_PASSWORD), then through
    /// the agent: the two must agree.
    @Test func substringAndPrefixFindWithAndWithoutCase() throws {
        let h = try Self.home()
        for password in [KCHome.password, nil] {
            if password == nil { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
            let via = password == nil ? "through the agent" : "in-process"
            #expect(try Self.accounts(h, ["-s", "git"], password: password) == [], "exact by default, \(via)")
            #expect(try Self.accounts(h, ["-s", "git", "--contains"], password: password) == ["alice", "bob", "carol"], "\(via)")
            #expect(try Self.accounts(h, ["-s", "git", "--prefix"], password: password) == ["alice", "bob"], "\(via)")
            #expect(try Self.accounts(h, ["-s", "GIT", "--prefix", "--ignore-case"], password: password) == ["alice", "bob", "dave"], "\(via)")
            #expect(try Self.accounts(h, ["-s", "git", "--ignore-case", "--contains"], password: password) == ["alice", "bob", "carol", "dave"], "\(via)")
            #expect(try Self.accounts(h, ["-s", "HUB", "--contains"], password: password) == [], "case counts without --ignore-case, \(via)")
            #expect(try Self.accounts(h, ["-s", "github.io", "--ignore-case"], password: password) == ["dave"], "\(via)")
            // Every text attribute given matches the same way.
            #expect(try Self.accounts(h, ["-s", "git", "-a", "o", "--contains"], password: password) == ["bob", "carol"], "\(via)")
            #expect(try Self.accounts(h, ["-a", "car", "--prefix"], password: password) == ["carol"], "\(via)")
            // -w with one match prints that secret's exact bytes.
            let one = try h.kc(["find", "-s", "lab", "--contains", "-w"], password: password)
            #expect(one.status == 0 && one.stdout == "s-bob", "\(via): \(one.stderr)")
            // No match is exit 44, and the message says how it matched.
            let none = try h.kc(["find", "-s", "hub", "--prefix"], password: password)
            #expect(none.status == 44, "\(via): \(none.stderr)")
            #expect(none.stderr.contains("no item matches service=hub (as a prefix)"), "\(none.stderr)")
            let noneFolded = try h.kc(["find", "-s", "xyz", "--contains", "--ignore-case", "-w"], password: password)
            #expect(noneFolded.status == 44 && noneFolded.stderr.contains("(containing, ignoring case)"), "\(noneFolded.stderr)")
        }
        let both = try h.kc(["find", "-s", "git", "--contains", "--prefix"])
        #expect(both.status == 2 && both.stderr.contains("choose one of --contains and --prefix"), "\(both.stderr)")
        let help = try h.kc(["find", "--help"])
        #expect(help.stdout.contains("--contains") && help.stdout.contains("--prefix") && help.stdout.contains("scans and decrypts the class"))
    }

    /// update and delete find the items with the scan, keep "one unless --all", and act on
    /// exactly the items found.
    @Test func updateAndDeleteWithContainsActOnTheItemsFound() throws {
        let h = try Self.home()
        var out = try h.kc(["update", "-s", "LAB", "--contains", "--ignore-case", "--new-comment", "moved to gitlab"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "-s", "gitlab.example", "--json"], password: KCHome.password)
        #expect(out.stdout.contains("moved to gitlab"), "\(out.stdout)")
        out = try h.kc(["delete", "-s", "git", "--contains"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("3 items match service=git (containing)") && out.stderr.contains("--all"), "\(out.stderr)")
        out = try h.kc(["update", "-s", "git", "--prefix", "-w", "new"], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("2 items match service=git (as a prefix)"), "\(out.stderr)")
        #expect(try Self.accounts(h, [], password: KCHome.password) == ["alice", "bob", "carol", "dave"], "nothing was deleted")
        out = try h.kc(["delete", "-s", "nothing", "--contains"], password: KCHome.password)
        #expect(out.status == 44, "\(out.stderr)")
        out = try h.kc(["delete", "-s", "git", "--contains", "--all"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 3 items\n", "\(out.stderr)")
        #expect(try Self.accounts(h, [], password: KCHome.password) == ["dave"])
        #expect(try h.kc(["find", "-s", "GitHub.io", "-w"], password: KCHome.password).stdout == "s-dave")
    }
}
