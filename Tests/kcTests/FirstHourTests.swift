import Foundation
import Testing
import KCTestSupport

/// Issue 21: what a new user tripped over, run the way the user ran it.
@Suite struct FirstHourTests {
    /// `kc lock -k wrok` (a typo) exited 0 while the real keychain stayed unlocked.
    @Test func lockingAKeychainThatDoesNotExistIsExit50() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["lock", "-k", "wrok"])
        #expect(out.status == 50, "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: no keychain at "), "\(out.stderr)")
        #expect(try h.kc(["lock"]).status == 0, "the existing keychain still locks")
    }

    /// `kc delete --all` with no attribute deleted every generic password without a word.
    /// In a script it now needs --yes, and --all always says how many went.
    @Test func deleteAllWithoutAFilterNeedsYesInAScript() throws {
        let h = try KCHome()
        try h.createKeychain()
        for name in ["a", "b", "c"] {
            #expect(try h.kc(["add", "-s", name, "-a", "me", "-w", "s-" + name], password: KCHome.password).status == 0)
        }
        var out = try h.kc(["delete", "--all"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("would delete all 3 generic items") && out.stderr.contains("--yes"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "a", "-w"], password: KCHome.password).stdout == "s-a", "nothing was deleted")
        // An attribute narrows it: no question, and the count is reported.
        out = try h.kc(["delete", "-s", "a", "--all"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 1 item\n", "\(out.stderr)")
        out = try h.kc(["delete", "--all", "--yes"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 2 items\n", "\(out.stderr)")
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44)
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

    /// `kc find -k /etc/passwd` suggested `chmod 600 /etc/passwd`: a file that is not a
    /// keychain is exit 93, "not a kc keychain", never a chmod hint.
    @Test func aFileThatIsNotAKeychainGetsNoChmodHint() throws {
        let h = try KCHome()
        let notes = h.directory + "/passwd-like"
        try Data("root:x:0:0:root:/root:/bin/bash\n".utf8).write(to: URL(fileURLWithPath: notes))
        chmod(notes, 0o644)
        let out = try h.kc(["find", "-k", notes, "-s", "x"], password: "pw")
        #expect(out.status == 93, "\(out.stderr)")
        #expect(out.stderr.contains("is not a kc keychain") && !out.stderr.contains("chmod"), "\(out.stderr)")
        // A real keychain made readable by others still gets the chmod advice.
        try h.createKeychain()
        chmod(h.defaultKeychain, 0o644)
        let shared = try h.kc(["find", "-s", "x"], password: KCHome.password)
        #expect(shared.status == 206 && shared.stderr.contains("chmod 600"), "\(shared.stderr)")
    }

    /// `--password-stdin` with the secret piped in too gave "wrong password" (51) or 36:
    /// it is a usage error that says the two cannot share stdin. Nothing is stored.
    @Test func passwordStdinAndASecretOnStdinCannotShareIt() throws {
        let h = try KCHome()
        try h.createKeychain()
        let both = Data((KCHome.password + "\nthe-secret").utf8)
        var out = try h.kc(["add", "-s", "svc", "-a", "me", "--password-stdin"], stdin: both)
        #expect(out.status == 2 && out.stderr.contains("cannot share stdin"), "\(out.stderr)")
        out = try h.kc(["update", "-s", "svc", "-a", "me", "--password-stdin"], stdin: both)
        #expect(out.status == 2 && out.stderr.contains("cannot share stdin"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "svc"], password: KCHome.password).status == 44, "nothing was stored")
        // With the secret given another way, --password-stdin works as before.
        out = try h.kc(["add", "-s", "svc", "-a", "me", "-w", "the-secret", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["update", "-s", "svc", "-a", "me", "--new-comment", "c", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0, "only attributes change: stdin is the password's \(out.stderr)")
    }
}
