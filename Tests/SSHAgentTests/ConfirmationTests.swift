import Foundation
import KCTestSupport
import Testing

/// `ssh-add -c` where someone can answer: the agent asks through the askpass program on the
/// display it started with, and signs only on a yes.
@Suite struct ConfirmationTests {
    /// An askpass program that records its question and answers with the exit status in
    /// the file `answer` beside it (0 yes, 1 no).
    static func askpass() throws -> String {
        let folder = NSTemporaryDirectory() + "/kc-askpass-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/askpass"
        let script = """
            #!/bin/sh
            d=$(dirname "$0")
            printf '%s|%s\\n' "$SSH_ASKPASS_PROMPT" "$1" >> "$d/asked"
            exit "$(cat "$d/answer")"

            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o700)
        return path
    }

    @Test func aConfirmKeySignsOnlyWhenTheUserSaysYes() throws {
        let askpass = try Self.askpass()
        let folder = URL(fileURLWithPath: askpass).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let f = try SSHAgentFixture(extra: ["DISPLAY": ":99", "SSH_ASKPASS": askpass])
        let key = try f.makeKey("asked", type: "ed25519")
        #expect(try f.sshAdd(["-c", key]).status == 0)
        try Data("1".utf8).write(to: URL(fileURLWithPath: folder + "/answer"))
        #expect(try f.sshAdd(["-T", key + ".pub"]).status != 0)
        try Data("0".utf8).write(to: URL(fileURLWithPath: folder + "/answer"))
        let yes = try f.sshAdd(["-T", key + ".pub"])
        #expect(yes.status == 0, "\(yes.stderr)")
        // Asked both times, as a confirmation, naming the key and its fingerprint.
        let asked = try String(contentsOfFile: folder + "/asked", encoding: .utf8)
        let lines = asked.split(separator: "\n")
        #expect(lines.count == 4, "\(asked)")   // the question spans two lines
        #expect(asked.hasPrefix("confirm|Allow use of key asked?"))
        #expect(asked.contains("Key fingerprint SHA256:"))
    }

    /// A keychain key stored with `--user-presence`: the agent asks for the keychain's
    /// password through askpass (not as a confirmation; the prompt names the key and the
    /// keychain) and signs only with the right one; no second, confirming question.
    @Test func aPresenceKeychainKeyAsksForTheKeychainPassword() throws {
        let folder = NSTemporaryDirectory() + "/kc-askpass-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let askpass = folder + "/askpass"
        // Records its question, prints the file `answer` and exits with the status in `status`.
        let script = """
            #!/bin/sh
            d=$(dirname "$0")
            printf '%s|%s\\n' "${SSH_ASKPASS_PROMPT-unset}" "$1" >> "$d/asked"
            cat "$d/answer"
            exit "$(cat "$d/status")"

            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: askpass))
        chmod(askpass, 0o700)
        func answer(_ text: String, status: Int) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/answer"))
            try Data(String(status).utf8).write(to: URL(fileURLWithPath: folder + "/status"))
        }

        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"])
        #expect(try h.ssh(["add", "key", "--name", "guarded", "--user-presence"]).status == 0)
        try FileManager.default.removeItem(atPath: h.directory + "/key")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let f = try SSHAgentFixture(home: h.home, extra: ["DISPLAY": ":99", "SSH_ASKPASS": askpass], throughKC: true)
        #expect(try f.sshAdd(["-L"]).stdout.contains("guarded"))

        try answer("not the password\n", status: 0)
        #expect(try f.sshAdd(["-T", h.directory + "/key.pub"]).status != 0, "a wrong password signs nothing")
        try answer("", status: 1)
        #expect(try f.sshAdd(["-T", h.directory + "/key.pub"]).status != 0, "a cancelled question signs nothing")
        try answer(KCHome.password + "\n", status: 0)
        let yes = try f.sshAdd(["-T", h.directory + "/key.pub"])
        #expect(yes.status == 0, "\(yes.stderr)")

        // Three signatures, three password questions (SSH_ASKPASS_PROMPT unset), no confirmation.
        let asked = try String(contentsOfFile: folder + "/asked", encoding: .utf8)
        let questions = asked.split(separator: "\n").filter { $0.contains("|") }
        #expect(questions.count == 3, "\(asked)")
        #expect(questions.allSatisfy { $0.hasPrefix("unset|kc's SSH agent: sign with the SSH key \"guarded\" of the keychain ") }, "\(asked)")
        #expect(asked.contains("Type the keychain's password"))
        #expect(!asked.contains("confirm|"))
    }

    /// Where nobody can be asked (no display), a `--user-presence` keychain key is refused
    /// at once and the askpass program is never run.
    @Test func aPresenceKeychainKeyIsRefusedAtOnceHeadless() throws {
        let folder = NSTemporaryDirectory() + "/kc-askpass-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let askpass = folder + "/askpass"
        try Data("#!/bin/sh\necho ran >> \"$(dirname \"$0\")/asked\"\necho '\(KCHome.password)'\n".utf8).write(to: URL(fileURLWithPath: askpass))
        chmod(askpass, 0o700)
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"])
        #expect(try h.ssh(["add", "key", "--name", "guarded", "--user-presence"]).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let f = try SSHAgentFixture(home: h.home, extra: ["SSH_ASKPASS": askpass], throughKC: true)
        #expect(try f.sshAdd(["-L"]).stdout.contains("guarded"))
        let started = Date()
        #expect(try f.sshAdd(["-T", h.directory + "/key.pub"]).status != 0)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(!FileManager.default.fileExists(atPath: folder + "/asked"))
    }
}
