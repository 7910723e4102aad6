import Foundation
import Testing
import KCTestSupport

/// Issue 21: messages that left the user guessing, and a `-w` that chose silently.
@Suite struct MessageTests {
    /// Two items matched a `-w` query and kc printed the first without a word.
    @Test func aSecondMatchForDashWIsAWarning() throws {
        let h = try KCHome()
        try h.createKeychain()
        for (path, secret) in [("/one", "s1"), ("/two", "s2")] {
            let out = try h.kc(
                ["add", "--class", "internet", "-r", "https", "-s", "github.com", "-a", "alice", "-p", path, "-w", secret],
                password: KCHome.password)
            #expect(out.status == 0, "\(out.stderr)")
        }
        var out = try h.kc(["find", "--class", "internet", "-s", "github.com", "-w"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout == "s1", "the first, exactly, as before")
        #expect(out.stderr.contains("warning: more than one item matches internet server=github.com"), "\(out.stderr)")
        #expect(out.stderr.contains("narrow the query with -p (they differ there)"), "\(out.stderr)")
        #expect(out.stderr.contains("`kc find --class internet -s github.com --all` lists them"), "\(out.stderr)")
        #expect(!out.stderr.contains("/one") && !out.stderr.contains("s2"), "names the flags, not the values")
        // Narrowed to one: no warning, through the agent as in-process.
        out = try h.kc(["find", "--class", "internet", "-s", "github.com", "-p", "/two", "-w"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout == "s2" && out.stderr.isEmpty, "\(out.stderr)")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        out = try h.kc(["find", "--class", "internet", "-s", "github.com", "-a", "alice", "-w"])
        #expect(out.status == 0 && out.stdout == "s1" && out.stderr.contains("more than one item matches"), "\(out.stderr)")
        out = try h.kc(["find", "--class", "internet", "-s", "github.com", "-p", "/one", "-w"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
    }

    /// `--limit -1` and `-t -5` gave "Missing value" or "invalid"; say they must be positive.
    @Test func negativeNumbersMustBePositive() throws {
        let h = try KCHome()
        try h.createKeychain()
        let cases: [([String], String)] = [
            (["find", "--limit", "-1"], "--limit must be a positive number"),
            (["find", "--limit", "0"], "--limit must be a positive number"),
            (["settings", "-t", "-5"], "-t/--timeout must be a positive number of seconds"),
            (["settings", "--max", "0"], "--max must be a positive number of seconds"),
            (["unlock", "--timeout", "-5"], "--timeout must be a positive number of seconds"),
            (["unlock", "--max", "99999999999"], "--max is at most 31536000 seconds")
        ]
        for (arguments, message) in cases {
            let out = try h.kc(arguments, password: KCHome.password)
            #expect(out.status == 2 && out.stderr.contains(message), "\(arguments): \(out.stderr)")
        }
        #expect(try h.kc(["settings", "-t", "600"], password: KCHome.password).stdout.contains("idle timeout: 600 s"))
    }

    /// A value that is too long named Apple's raw key ("svce"); name the flag.
    @Test func aValueTooLongNamesTheFlag() throws {
        let h = try KCHome()
        try h.createKeychain()
        let long = String(repeating: "x", count: 70_000)
        var out = try h.kc(["add", "-s", long, "-a", "me", "-w", "s"], password: KCHome.password)
        #expect(out.status == 42 && out.stderr.contains("the value of -s/--service is 70000 bytes; at most 65536"), "\(out.stderr.prefix(300))")
        #expect(!out.stderr.contains("svce"))
        out = try h.kc(["find", "--class", "internet", "-p", long], password: KCHome.password)
        #expect(out.status == 42 && out.stderr.contains("-p/--path"), "\(out.stderr.prefix(300))")
        #expect(try h.kc(["add", "-s", "svc", "-a", "me", "-w", "s"], password: KCHome.password).status == 0)
        out = try h.kc(["update", "-s", "svc", "-a", "me", "--new-comment", long], password: KCHome.password)
        #expect(out.status == 42 && out.stderr.contains("--new-comment"), "\(out.stderr.prefix(300))")
    }

    /// `kc ad -s x` said "Unknown option '-s'"; `kc ls` "Unexpected argument".
    @Test func aMistypedCommandIsNamedWithTheNearestOne() throws {
        let h = try KCHome()
        var out = try h.kc(["ad", "-s", "x"])
        #expect(out.status == 2 && out.stderr.hasPrefix("kc: unknown command 'ad'; did you mean 'add'?"), "\(out.stderr)")
        out = try h.kc(["fnd", "-s", "x", "-w"])
        #expect(out.status == 2 && out.stderr.contains("did you mean 'find'?"), "\(out.stderr)")
        out = try h.kc(["ls"])
        #expect(out.status == 2 && out.stderr.contains("unknown command 'ls'; did you mean 'list'?"), "\(out.stderr)")
        out = try h.kc(["xyzzy"])
        #expect(out.status == 2 && out.stderr.contains("unknown command 'xyzzy'") && !out.stderr.contains("did you mean"), "\(out.stderr)")
        #expect(try h.kc(["help", "find"]).status == 0, "help still works")
    }

    /// The words of pass, gopass, rbw, op, bw and macOS `security` are matched by meaning
    /// before spelling: `kc rm` said "did you mean 'run'?", `kc insert` "'inject'" (issue 32).
    @Test func anotherToolsWordForACommandNamesTheCommandMeant() throws {
        let h = try KCHome()
        let cases: [([String], String)] = [
            (["rm", "-s", "x"], "unknown command 'rm'; did you mean `kc delete -s NAME`?"),
            (["remove"], "did you mean `kc delete -s NAME`?"), (["del"], "did you mean `kc delete -s NAME`?"),
            (["insert", "github.com"], "unknown command 'insert'; did you mean `kc add -s NAME`?"),
            (["init"], "unknown command 'init'; did you mean 'create'?"), (["new-keychain"], "did you mean 'create'?"),
            (["search", "git"], "did you mean `kc find --contains -s TEXT --all` or `kc list`?"),
            (["grep", "git"], "did you mean `kc find --contains -s TEXT --all` or `kc list`?"),
            (["edit", "github.com"], "did you mean `kc update -s NAME`?"),
            (["show", "github.com"], "did you mean `kc find NAME -w` (the secret) or `kc find NAME` (its attributes)?"),
            (["get"], "`kc find NAME -w`"), (["cat"], "`kc find NAME -w`"),
            (["ls"], "unknown command 'ls'; did you mean 'list'?"),
            (["mv"], "did you mean `kc update -s NAME --new-service NEW` (to rename) or `kc move -s NAME --to KEYCHAIN` (to another keychain)?"),
            (["cp"], "`kc find NAME --clip` (to the clipboard) or `kc move -s NAME --to KEYCHAIN` (to another keychain) or `kc export` (to a file)?"),
            (["delete-generic-password", "-s", "x"], "did you mean `kc delete -s NAME`?"),
            (["find-internet-password"], "did you mean `kc find --class internet -s SERVER`?"),
            (["unlock-keychain"], "did you mean 'unlock'?")
        ]
        for (arguments, expected) in cases {
            let out = try h.kc(arguments)
            #expect(out.status == 2 && out.stdout.isEmpty, "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains(expected) && out.stderr.hasSuffix("(kc --help lists the commands)\n"), "\(arguments): \(out.stderr)")
            #expect(!out.stderr.contains("'run'") && !out.stderr.contains("'inject'"), "\(arguments): \(out.stderr)")
        }
        // What a suggestion says works as it is given (a placeholder filled in).
        #expect(try h.kc(["create", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "github.com", "-w", "s"], password: KCHome.password).status == 0)
        let out = try h.kc(["find", "github.com", "-w"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout == "s", "\(out.stderr)")
    }
}
