import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// A person at a terminal, driven through a pseudo-terminal (`pty_session.py`): prompts
/// appear, typing is not echoed, new passwords and secrets are asked twice.
@Suite struct TerminalTests {
    struct Session: Decodable {
        var status: Int
        var screen: String
        var echo_off: [Bool]
        var error: String?
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path

    func drive(
        _ h: KCHome, _ arguments: [String], _ steps: [[String]], env: [String: String] = [:],
        answers: [[String]] = []
    ) throws -> Session {
        let spec: [String: Any] = [
            "argv": [KCBinary.path] + arguments,
            "env": h.environment.merging(env) { _, b in b }.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a },
            "steps": steps, "answers": answers, "timeout": 30
        ]
        let file = h.directory + "/session-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(
            ["/usr/bin/env", "python3", Self.script, file],
            environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"])
        let data = Data(out.stdoutBytes)
        return try JSONDecoder().decode(Session.self, from: data)
    }

    @Test func createAsksTwiceWithoutEcho() throws {
        let h = try KCHome()
        let s = try drive(
            h, ["create", "--kdf", "interactive"],
            [
                ["expect", "New password for keychain"], ["send", "hunter2-typed\n"],
                ["expect", "Retype new password:"], ["send", "hunter2-typed\n"]
            ])
        #expect(s.error == nil && s.status == 0, "\(s.screen)")
        #expect(s.echo_off == [true, true], "echo is off while typing")
        #expect(!s.screen.contains("hunter2-typed"), "the password never appears on the screen")
        #expect(s.screen.contains("kc: created the keychain \(h.defaultKeychain)"))
        // The typed password opens it.
        #expect(try h.kc(["find", "--all"], password: "hunter2-typed").status == 44)
    }

    @Test func exportRefusesToPrintSecretsOnATerminal() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-w", "terminal-secret"], password: KCHome.password).status == 0)
        var s = try drive(h, ["export"], [["expect", "not to a terminal"]], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 206, "\(s.screen)")
        #expect(!s.screen.contains("dGVybWluYWwtc2VjcmV0"), "no secret on the screen")
        s = try drive(h, ["export", "--force"], [["expect", "kc-export"]], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0 && s.screen.contains("dGVybWluYWwtc2VjcmV0"), "\(s.screen)")
    }

    /// A large import shows a progress line on a terminal, and none in a pipe or log.
    @Test func importShowsProgressOnATerminal() throws {
        let h = try KCHome()
        try h.createKeychain()
        var csv = "name,url,username,password\n"
        for i in 0..<6000 { csv += "site\(i),https://site\(i).example.com,user\(i),pw-\(i)\n" }
        try csv.write(toFile: h.directory + "/big.csv", atomically: true, encoding: .utf8)
        let s = try drive(h, ["import", h.directory + "/big.csv"], [["expect", "6000 created"]], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0 && s.screen.contains("kc: importing 6000 items… 5000"), "\(s.screen)")
        let piped = try h.kc(["import", h.directory + "/big.csv"], password: KCHome.password)
        #expect(piped.status == 0 && !piped.stderr.contains("importing") && piped.stderr.contains("6000 unchanged"), "\(piped.stderr)")
    }

    /// On a terminal kc run passes the child's output through untouched, colours and all.
    @Test func runOutputOnATerminalIsUntouched() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "db", "-a", "app", "-w", "hunter2-secret"], password: KCHome.password).status == 0)
        let s = try drive(
            h, ["run", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c", "printf '\\033[31m%s\\033[0m end\\n' \"$DB\""],
            [["expect", "end"]], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0 && s.screen.contains("\u{1B}[31mhunter2-secret\u{1B}[0m end"), "\(s.screen)")
    }

    @Test func mismatchIsRefused() throws {
        let h = try KCHome()
        let s = try drive(
            h, ["create", "--kdf", "interactive"],
            [
                ["expect", "New password for keychain"], ["send", "one\n"],
                ["expect", "Retype new password:"], ["send", "two\n"]
            ])
        #expect(s.status == 206, "\(s.screen)")
        #expect(s.screen.contains("kc: the two entries do not match; nothing was changed"))
        #expect(!FileManager.default.fileExists(atPath: h.defaultKeychain))
    }

    @Test func addAndFindAtAPrompt() throws {
        let h = try KCHome()
        try h.createKeychain()
        var s = try drive(
            h, ["add", "-s", "github.com", "-a", "alice"],
            [
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"],
                ["expect", "Secret:"], ["send", "typed secret\n"],
                ["expect", "Retype secret:"], ["send", "typed secret\n"]
            ])
        #expect(s.error == nil && s.status == 0, "\(s.screen)")
        #expect(s.echo_off == [true, true, true])
        #expect(!s.screen.contains("typed secret") && !s.screen.contains(KCHome.password))
        // The password typed for `add` unlocked the keychain in the agent: no prompt now.
        s = try drive(h, ["find", "-s", "github.com", "-w"], [])
        #expect(s.status == 0 && !s.screen.contains("Password for keychain"), "\(s.screen)")
        #expect(s.screen.hasSuffix("typed secret\r\n"), "a newline is added on a terminal")
        #expect(try h.kc(["lock"]).status == 0)
        s = try drive(
            h, ["find", "-s", "github.com", "-w"],
            [
                ["expect", "Password for keychain"], ["send", "wrong\n"],
                ["expect", "Password for keychain"], ["send", "wrong\n"],
                ["expect", "Password for keychain"], ["send", "wrong\n"]
            ])
        #expect(s.status == 51)
        #expect(s.screen.contains("kc: wrong password for"))
    }

    @Test func unlockAsksOnceThenNothingIsAsked() throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "s3cret"], password: KCHome.password)
        var s = try drive(h, ["unlock"], [["expect", "Password for keychain"], ["send", KCHome.password + "\n"]])
        #expect(s.status == 0 && s.echo_off == [true], "\(s.screen)")
        s = try drive(h, ["find", "-s", "github.com", "-a", "alice", "-w"], [])
        #expect(s.status == 0 && s.screen == "s3cret\r\n", "no prompt: \(s.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func secretMismatchAddsNothing() throws {
        let h = try KCHome()
        try h.createKeychain()
        let s = try drive(
            h, ["add", "-s", "x"],
            [
                ["expect", "Secret:"], ["send", "first\n"], ["expect", "Retype secret:"], ["send", "second\n"]
            ], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 206, "\(s.screen)")
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44)
    }

    /// Issue 21: `kc delete --all` with nothing to narrow it asks at a terminal, showing the
    /// count; "n" keeps everything, "y" deletes and says how many went.
    @Test func deleteAllWithoutAFilterAsksFirst() throws {
        let h = try KCHome()
        try h.createKeychain()
        for name in ["one", "two", "three"] {
            #expect(try h.kc(["add", "-s", name, "-w", "s-" + name], password: KCHome.password).status == 0)
        }
        var s = try drive(
            h, ["delete", "--all"], [["expect", "Delete all 3 generic items of"], ["send", "n\n"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == Int(UInt8(truncatingIfNeeded: errSecUserCanceled)), "\(s.screen)")
        #expect(s.screen.contains("nothing was deleted"))
        #expect(try h.kc(["find", "--all"], password: KCHome.password).stdout.components(separatedBy: "class: generic").count == 4)
        s = try drive(
            h, ["delete", "--all"], [["expect", "Delete all 3 generic items of"], ["send", "y\n"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0, "\(s.screen)")
        #expect(s.screen.contains("kc: deleted 3 items"))
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44)
    }
}
