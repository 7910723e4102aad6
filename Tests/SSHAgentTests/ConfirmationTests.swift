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
}
