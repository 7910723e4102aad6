import Foundation
import Testing
import KCTestSupport

/// Issue 21: `kc move … --to NAME`, an item from one keychain to another in one step,
/// through the real binary: through the agent and in-process, with the checks that keep
/// both keychains whole.
@Suite struct MoveTests {
    /// An old item with every kind of attribute, as `kc export` writes it: its dates must
    /// survive the move.
    static let oldItem = """
        {"format": "kc-export", "version": 1, "exported": "2021-06-01T00:00:00Z",
         "items": [{"class": "generic",
                    "attributes": {"service": "github.com", "account": "alice", "label": "GitHub",
                                   "kind": "token", "comment": "from 2020", "generic": {"base64": "/wA="},
                                   "created": "2020-01-02T03:04:05Z", "modified": "2021-02-03T04:05:06Z"},
                    "data": "Z2hwX3NlY3JldA=="}]}
        """

    /// A home with the default keychain and `work`, both with the test password.
    static func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["create", "--kdf", "interactive", "work"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        return h
    }

    /// `kc find --json -g ARGS`: the item's whole record, attributes, dates and secret.
    static func record(_ h: KCHome, _ arguments: [String], password: String? = KCHome.password) throws -> KCBinary.Output {
        try h.kc(["find", "--json", "-g"] + arguments, password: password)
    }

    @Test func moveThroughTheAgentKeepsTheWholeItem() throws {
        let h = try Self.home()
        var out = try h.kc(["import", "-"], password: KCHome.password, stdin: Data(Self.oldItem.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["add", "-s", "other", "-a", "bob", "-w", "stays"], password: KCHome.password).status == 0)
        let before = try Self.record(h, ["-s", "github.com", "-a", "alice"])
        #expect(before.status == 0 && before.stdout.contains("2020-01-02T03:04:05Z"), "\(before.stdout)")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        // No password at all: both keychains are the agent's.
        out = try h.kc(["move", "-s", "github.com", "-a", "alice", "--to", "work"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.isEmpty, "the secret never reaches stdout")
        #expect(out.stderr.hasPrefix("kc: moved 1 item from \(h.defaultKeychain) to \(h.directory)/data/kc/work.keychain-db"), "\(out.stderr)")
        let after = try Self.record(h, ["-k", "work", "-s", "github.com", "-a", "alice"], password: nil)
        #expect(after.status == 0 && after.stdout == before.stdout, "every attribute, both dates and the secret: \(after.stdout)")
        #expect(try Self.record(h, ["-s", "github.com"], password: nil).status == 44, "gone from the source")
        #expect(try h.kc(["find", "-s", "other", "-w"]).stdout == "stays", "the rest of the source is untouched")
        #expect(try h.kc(["verify", "-k", "work"]).status == 0)
        #expect(try h.kc(["verify"]).status == 0)
    }

    @Test func moveInProcessWithKCPasswordForBoth() throws {
        let h = try Self.home()
        #expect(
            try h.kc(
                ["add", "-k", "work", "--class", "internet", "-s", "example.com", "-a", "me", "-r", "https", "-w", "pw1"],
                password: KCHome.password
            ).status == 0)
        let before = try Self.record(h, ["-k", "work", "--class", "internet", "-s", "example.com"])
        var out = try h.kc(["move", "-k", "work", "--class", "internet", "-s", "example", "--prefix", "--to", "login"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let after = try Self.record(h, ["--class", "internet", "-s", "example.com"])
        #expect(after.status == 0 && after.stdout == before.stdout, "\(after.stdout)")
        // The source's password from a file, the destination's from nowhere: exit 36 before
        // anything changes, naming the destination.
        let file = h.directory + "/pw"
        try Data(KCHome.password.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        out = try h.kc(["move", "--class", "internet", "-s", "example.com", "--to", "work", "--password-file", file])
        #expect(out.status == 36, "\(out.stderr)")
        #expect(out.stderr.contains("work.keychain-db is locked") && out.stderr.contains("kc unlock -k"), "\(out.stderr)")
        #expect(try Self.record(h, ["--class", "internet", "-s", "example.com"]).stdout == before.stdout, "still in the source")
        // Unknown destination, and the source itself.
        out = try h.kc(["move", "--class", "internet", "-s", "example.com", "--to", "nosuch"], password: KCHome.password)
        #expect(out.status == 50 && out.stderr.contains("nosuch.keychain-db"), "\(out.stderr)")
        out = try h.kc(["move", "--class", "internet", "-s", "example.com", "--to", h.defaultKeychain], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("the keychain the item is in"), "\(out.stderr)")
        #expect(try h.kc(["move", "-s", "x", "--to", ""]).status == 2)
    }

    /// Two keychains with different passwords and no agent: a person at the terminal is
    /// asked for each, by name, echo off, before anything is read or written.
    @Test func atATerminalEachPasswordIsAskedForByName() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["create", "--kdf", "interactive", "work"], password: "work password").status == 0)
        #expect(try h.kc(["add", "-s", "vpn", "-a", "me", "-w", "vpn-secret"], password: KCHome.password).status == 0)
        let work = h.directory + "/data/kc/work.keychain-db"
        let s = try TerminalTests().drive(
            h, ["move", "-s", "vpn", "--to", "work"],
            [
                ["expect", "Password for keychain \(h.defaultKeychain): "], ["send", KCHome.password + "\n"],
                ["expect", "Password for keychain \(work): "], ["send", "work password\n"],
                ["expect", "moved 1 item"]
            ])
        #expect(s.error == nil && s.status == 0, "\(s.screen)")
        #expect(s.echo_off == [true, true], "echo is off while typing")
        #expect(!s.screen.contains("vpn-secret") && !s.screen.contains("work password"), "\(s.screen)")
        #expect(try h.kc(["find", "-k", "work", "-s", "vpn", "-w"], password: "work password").stdout == "vpn-secret")
        #expect(try h.kc(["find", "-s", "vpn"], password: KCHome.password).status == 44)
    }

    /// An item with the same primary key in the destination: exit 45, both keychains as
    /// they were (one item, and several with --all).
    @Test func aDuplicateInTheDestinationChangesNothing() throws {
        let h = try Self.home()
        for (keychain, service, secret) in [("login", "db", "source-db"), ("login", "db-replica", "source-replica"), ("work", "db", "work-db")] {
            #expect(try h.kc(["add", "-k", keychain, "-s", service, "-a", "app", "-w", secret], password: KCHome.password).status == 0)
        }
        let source = try Self.record(h, ["-s", "db", "--prefix", "--all"])
        let destination = try Self.record(h, ["-k", "work", "--all"])
        var out = try h.kc(["move", "-s", "db", "-a", "app", "--to", "work"], password: KCHome.password)
        #expect(out.status == 45, "\(out.stderr)")
        #expect(out.stderr.contains("already has an item") && out.stderr.contains("nothing was moved"), "\(out.stderr)")
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        out = try h.kc(["move", "-s", "db", "--prefix", "--all", "--to", "work"], password: KCHome.password)
        #expect(out.status == 45, "\(out.stderr)")
        #expect(out.stderr.contains("1 of the 2 items matching service=db (as a prefix) is already in"), "\(out.stderr)")
        #expect(try Self.record(h, ["-s", "db", "--prefix", "--all"]).stdout == source.stdout, "the source is as it was")
        #expect(try Self.record(h, ["-k", "work", "--all"]).stdout == destination.stdout, "the destination is as it was")
    }

    /// More than one match is refused unless --all, as update and delete do.
    @Test func moreThanOneMatchNeedsAll() throws {
        let h = try Self.home()
        for account in ["a", "b"] {
            #expect(try h.kc(["add", "-s", "shared", "-a", account, "-w", "s-" + account], password: KCHome.password).status == 0)
        }
        var out = try h.kc(["move", "-s", "shared", "--to", "work"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("2 items match service=shared; kc move changes one unless --all is given"), "\(out.stderr)")
        #expect(try h.kc(["find", "-k", "work", "--all"], password: KCHome.password).status == 44, "nothing was moved")
        out = try h.kc(["move", "-s", "nothing", "--to", "work"], password: KCHome.password)
        #expect(out.status == 44, "\(out.stderr)")
        out = try h.kc(["move", "-s", "shared", "--all", "--to", "work"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("moved 2 items"), "\(out.stderr)")
        #expect(try h.kc(["find", "-k", "work", "-s", "shared", "-a", "b", "-w"], password: KCHome.password).stdout == "s-b")
        #expect(try h.kc(["find", "-s", "shared"], password: KCHome.password).status == 44)
    }
}
