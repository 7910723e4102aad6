import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 32, "Messages and exit codes": what a new user met, run as they ran it.
@Suite struct ExitMessageTests {
    /// An empty password from a script was tried and reported as a wrong password (51).
    @Test func anEmptyPasswordFromAScriptSaysSo() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["find", "-s", "x", "--password-stdin"], stdin: Data())
        #expect(out.status == 206 && out.stderr.contains("the password from --password-stdin is empty"), "\(out.stderr)")
        out = try h.kc(["find", "-s", "x", "--password-stdin"], stdin: Data("\n".utf8))
        #expect(out.status == 206 && out.stderr.contains("the password from --password-stdin is empty"), "one newline dropped: \(out.stderr)")
        let file = h.directory + "/empty-password"
        try Data().write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        out = try h.kc(["find", "-s", "x", "--password-file", file])
        #expect(out.status == 206 && out.stderr.contains("the password from the password file \(file) is empty"), "\(out.stderr)")
        out = try h.kc(["find", "-s", "x"], password: "")
        #expect(out.status == 206 && out.stderr.contains("the password from KC_PASSWORD is empty"), "\(out.stderr)")
        out = try h.kc(["unlock", "--password-stdin"], stdin: Data())
        #expect(out.status == 206 && out.stderr.contains("is empty") && !out.stderr.contains("wrong password"), "\(out.stderr)")
        // The right password still works, and a wrong one is still 51.
        #expect(try h.kc(["find", "-s", "x"], password: KCHome.password).status == 44)
        #expect(try h.kc(["find", "-s", "x"], password: "not it").status == 51)
    }

    /// `kc find -k /etc/passwd` said "locked" (36) without a password; the header says
    /// "not a kc keychain" (93) with or without one.
    @Test func notAKeychainBeforeLocked() throws {
        let h = try KCHome()
        let text = h.directory + "/notes.txt"
        try Data("root:x:0:0:root:/root:/bin/bash\n".utf8).write(to: URL(fileURLWithPath: text))
        chmod(text, 0o600)
        for password in [nil, KCHome.password] {
            for arguments in [["find", "-k", text, "-s", "x"], ["unlock", "-k", text], ["settings", "-k", text]] {
                let out = try h.kc(arguments, password: password)
                #expect(out.status == 93 && out.stderr.contains("\(text) is not a kc keychain"), "\(arguments) \(password ?? "-"): \(out.stderr)")
                #expect(!out.stderr.contains("locked"), "\(out.stderr)")
            }
        }
        // A file other users can read (as /etc/passwd is) is named the same way.
        chmod(text, 0o644)
        let out = try h.kc(["find", "-k", text, "-s", "x"])
        #expect(out.status == 93 && out.stderr.contains("is not a kc keychain"), "\(out.stderr)")
        // A real keychain without a password is still "locked" (36).
        try h.createKeychain()
        #expect(try h.kc(["find", "-s", "x"]).status == 36)
    }

    /// A cancelled command exits 128 (errSecUserCanceled's low byte): documented, and named
    /// by `kc error`.
    @Test func cancelledIsDocumented() throws {
        let h = try KCHome()
        var out = try h.kc(["error", "128"])
        #expect(out.status == 0 && out.stdout.contains("as a kc exit code: -128 User canceled the operation."), "\(out.stdout)")
        out = try h.kc(["error", "-128"])
        #expect(out.stdout.contains("-128 User canceled the operation."), "\(out.stdout)")
        out = try h.kc(["--help"])
        #expect(out.stdout.contains("128 cancelled by the user"), "\(out.stdout)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let errors = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        #expect(errors.contains("| -128 | errSecUserCanceled | User canceled the operation. | 128 |"))
    }

    /// `kc lock --password-file /nonexistent` succeeded silently: lock takes no password.
    @Test func lockRefusesAPassword() throws {
        let h = try KCHome()
        try h.createKeychain()
        for extra in [["--password-file", "/nonexistent"], ["--password-stdin"]] {
            let out = try h.kc(["lock"] + extra, stdin: Data("pw\n".utf8))
            #expect(out.status == 2 && out.stderr.contains("kc lock needs no password"), "\(extra): \(out.stderr)")
        }
        #expect(try h.kc(["lock"], password: KCHome.password).status == 0, "KC_PASSWORD set for a whole script is not a mistake")
    }

    /// Two matches without -w printed the first with nothing on stderr.
    @Test func aSecondMatchWithoutDashWIsAWarning() throws {
        let h = try KCHome()
        try h.createKeychain()
        for account in ["alice", "bob"] {
            #expect(try h.kc(["add", "-s", "github.com", "-a", account, "-w", "s-" + account], password: KCHome.password).status == 0)
        }
        for flags in [[], ["-g"], ["--json"]] {
            let out = try h.kc(["find", "-s", "github.com"] + flags, password: KCHome.password)
            #expect(out.status == 0 && out.stdout.contains("alice") && !out.stdout.contains("bob"), "\(flags): the first only: \(out.stdout)")
            #expect(out.stderr.contains("warning: more than one item matches service=github.com; printed the first"), "\(flags): \(out.stderr)")
            #expect(out.stderr.contains("narrow the query with -a (they differ there)"), "\(flags): \(out.stderr)")
            #expect(!out.stderr.contains("s-bob") && !out.stderr.contains("s-alice"), "no secret on stderr")
        }
        var out = try h.kc(["find", "-s", "github.com", "-a", "bob"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty, "one match: no warning: \(out.stderr)")
        out = try h.kc(["find", "-s", "github.com", "--all"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty && out.stdout.contains("bob"), "--all: \(out.stderr)")
    }

    /// `kc export` in a script failed entirely (36) for one item that requires presence.
    @Test func exportLeavesOutWhatNobodyCanConfirm() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "plain", "-a", "me", "-w", "plain-secret"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711"], password: KCHome.password).status == 0)
        for unlocked in [false, true] {
            if unlocked { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
            let out = try h.kc(["export"], password: KCHome.password)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("\"plain\"") && !out.stdout.contains("\"bank\""), "\(out.stdout)")
            #expect(!out.stdout.contains(Data("pin-4711".utf8).base64EncodedString()) && !out.stdout.contains("pin-4711"))
            #expect(out.stderr.contains("left out 1 item that requires user presence, with no terminal to confirm it on: \"bank\""), "\(out.stderr)")
        }
        #expect(try h.kc(["lock"]).status == 0)
    }
}

extension TerminalTests {
    /// Issue 32: an empty first entry is asked again; a short password is taken with a warning.
    @Test func createRefusesEmptyAndWarnsShort() throws {
        let h = try KCHome()
        var s = try drive(
            h, ["create", "--kdf", "interactive"],
            [
                ["expect", "New password for keychain"], ["send", "\n"],
                ["expect", "the password is empty: type one"],
                ["expect", "New password for keychain"], ["send", "abc\n"],
                ["expect", "only 3 characters"],
                ["expect", "Retype new password:"], ["send", "abc\n"]
            ])
        #expect(s.error == nil && s.status == 0, "\(s.screen)")
        #expect(s.screen.contains("anyone with the keychain file can try guesses offline"), "\(s.screen)")
        #expect(try h.kc(["find", "--all"], password: "abc").status == 44, "the short password was taken")
        // A long one: no warning. Three empty entries: refused.
        let long = try KCHome()
        s = try drive(
            long, ["create", "--kdf", "interactive"],
            [
                ["expect", "New password for keychain"], ["send", "correct horse battery\n"],
                ["expect", "Retype new password:"], ["send", "correct horse battery\n"]
            ])
        #expect(s.status == 0 && !s.screen.contains("warning"), "\(s.screen)")
        let empty = try KCHome()
        s = try drive(
            empty, ["create", "--kdf", "interactive"],
            [
                ["expect", "New password for keychain"], ["send", "\n"],
                ["expect", "New password for keychain"], ["send", "\n"],
                ["expect", "New password for keychain"], ["send", "\n"]
            ])
        #expect(s.status == 206 && s.screen.contains("the new password is empty"), "\(s.screen)")
        #expect(!FileManager.default.fileExists(atPath: empty.defaultKeychain))
    }

    /// Issue 32: `kc delete` on a terminal deleted silently; it names what went.
    @Test func deleteOnATerminalSaysWhatWent() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "gone-secret"], password: KCHome.password).status == 0)
        let s = try drive(h, ["delete", "-s", "github.com", "-a", "alice"], [], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0, "\(s.screen)")
        #expect(s.screen.contains("kc: deleted 1 item: service=github.com account=alice"), "\(s.screen)")
        #expect(!s.screen.contains("gone-secret"))
        // In a script (stdout a pipe) it stays silent.
        #expect(try h.kc(["add", "-s", "github.com", "-a", "bob", "-w", "x"], password: KCHome.password).status == 0)
        let out = try h.kc(["delete", "-s", "github.com", "-a", "bob"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty && out.stdout.isEmpty, "\(out.stderr)")
    }
}
