import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// The PIN typed on a terminal, as a person would (Tests/kcTests/pty_session.py): asked
/// twice when sealing, once when unsealing, with echo off, and never shown.
@Suite struct TPMTerminalTests {
    struct PtySession: Decodable {
        var status: Int
        var screen: String
        var echo_off: [Bool]
        var echo_at_exit: Bool?
    }

    static let ptyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("kcTests/pty_session.py").path

    /// Runs `kc-tpm ARGUMENTS < input > output` with the pty as its terminal, typing `answers`.
    static func onTerminal(_ arguments: String, in folder: String, tcti: String, answers: [[String]], steps: [[String]] = []) throws -> PtySession {
        let spec: [String: Any] = [
            "argv": ["/bin/sh", "-c", "exec \"$0\" \(arguments) < \"$1/input\" > \"$1/output\"", KCTPM.path, folder],
            "env": ["PATH": "/usr/bin:/bin", "TERM": "dumb", "KC_TPM_TCTI": tcti],
            "steps": steps, "answers": answers, "timeout": 30
        ]
        let file = folder + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", ptyScript, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
        return try JSONDecoder().decode(PtySession.self, from: Data(out.stdoutBytes))
    }

    @Test func aPINTypedOnTheTerminalSealsAndUnseals() throws {
        let tpm = try TestSWTPM()
        let folder = tpm.folder + "-session"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let secret = KCTPM.secret()
        try Data(secret).write(to: URL(fileURLWithPath: folder + "/input"))
        let sealed = try Self.onTerminal(
            "seal --pin", in: folder, tcti: tpm.tcti, answers: [["TPM PIN: ", "8642 tpm\n"], ["TPM PIN again: ", "8642 tpm\n"]])
        #expect(sealed.status == 0, "\(sealed.screen)")
        #expect(sealed.echo_off == [true, true], "\(sealed.echo_off)")
        #expect(!sealed.screen.contains("8642"), "the PIN was shown: \(sealed.screen)")
        let blob = try Data(contentsOf: URL(fileURLWithPath: folder + "/output"))
        try blob.write(to: URL(fileURLWithPath: folder + "/input"))

        let wrong = try Self.onTerminal("unseal", in: folder, tcti: tpm.tcti, answers: [["TPM PIN: ", "1111\n"]])
        #expect(wrong.status == exitCode(for: errSecAuthFailed), "\(wrong.screen)")
        let opened = try Self.onTerminal("unseal", in: folder, tcti: tpm.tcti, answers: [["TPM PIN: ", "8642 tpm\n"]])
        #expect(opened.status == 0, "\(opened.screen)")
        #expect(opened.echo_off == [true])
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/output"))) == secret)
    }

    /// Ctrl-C at the PIN prompt (the pty sends ^C, the kernel SIGINT): kc-tpm dies of the
    /// signal and the terminal has echo on again, as kc's own prompts leave it.
    @Test func ctrlCAtThePINPromptRestoresEcho() throws {
        let tpm = try TestSWTPM()
        let folder = tpm.folder + "-session"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(KCTPM.secret()).write(to: URL(fileURLWithPath: folder + "/input"))
        let out = try Self.onTerminal("seal --pin", in: folder, tcti: tpm.tcti, answers: [], steps: [["expect", "TPM PIN: "], ["send", "\u{3}"]])
        #expect(out.echo_off == [true], "echo was off at the prompt: \(out.echo_off)")
        #expect(out.status == -Int(SIGINT), "died of SIGINT: \(out.status) \(out.screen)")
        #expect(out.echo_at_exit == true, "echo after Ctrl-C: \(String(describing: out.echo_at_exit))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/output")).isEmpty)
    }

    /// `--no-prompt` (for `kc unlock --tpm2-only`): a PIN key fails at once, exit 36,
    /// even with a terminal there to ask on.
    @Test func noPromptNeverAsks() throws {
        let tpm = try TestSWTPM()
        let folder = tpm.folder + "-session"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sealed = try KCTPM.run(["seal", "--pin"], tcti: tpm.tcti, stdin: KCTPM.secret(), pin: "2468")
        try #require(sealed.status == 0, "\(sealed.stderr)")
        try Data(sealed.stdoutBytes).write(to: URL(fileURLWithPath: folder + "/input"))
        let out = try Self.onTerminal("unseal --no-prompt", in: folder, tcti: tpm.tcti, answers: [["TPM PIN: ", "2468\n"]])
        #expect(out.status == exitCode(for: errSecInteractionNotAllowed), "\(out.screen)")
        #expect(!out.screen.contains("TPM PIN:") && out.echo_off.isEmpty, "\(out.screen)")
        #expect(out.screen.contains("--no-prompt allows no question"), "\(out.screen)")
    }

    /// Raw bytes are not written to a terminal: `seal` and `unseal` with stdout on one
    /// refuse before they ask or touch the TPM, exit 2.
    @Test func rawBytesAreNotWrittenToTheTerminal() throws {
        let tpm = try TestSWTPM()
        let folder = tpm.folder + "-session"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let secret = KCTPM.secret()
        try Data(secret).write(to: URL(fileURLWithPath: folder + "/input"))
        for command in ["seal --pin", "unseal"] {
            let spec: [String: Any] = [
                "argv": ["/bin/sh", "-c", "exec \"$0\" \(command) < \"$1/input\"", KCTPM.path, folder],
                "env": ["PATH": "/usr/bin:/bin", "TERM": "dumb", "KC_TPM_TCTI": tpm.tcti],
                "steps": [[String]](), "answers": [["TPM PIN: ", "2468\n"]], "timeout": 30
            ]
            let file = folder + "/session.json"
            try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
            let run = try Spawn.run(["/usr/bin/python3", Self.ptyScript, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
            let out = try JSONDecoder().decode(PtySession.self, from: Data(run.stdoutBytes))
            #expect(out.status == 2, "\(command): \(out.screen)")
            #expect(out.screen.contains("writes raw bytes") && !out.screen.contains("TPM PIN:"), "\(command): \(out.screen)")
        }
    }

    @Test func twoPINsThatDifferSealNothing() throws {
        let tpm = try TestSWTPM()
        let folder = tpm.folder + "-session"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(KCTPM.secret()).write(to: URL(fileURLWithPath: folder + "/input"))
        let out = try Self.onTerminal("seal --pin", in: folder, tcti: tpm.tcti, answers: [["TPM PIN: ", "1234\n"], ["TPM PIN again: ", "4321\n"]])
        #expect(out.status == exitCode(for: errSecParam), "\(out.screen)")
        #expect(out.screen.contains("kc: the two PINs differ"), "\(out.screen)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/output")).isEmpty)
    }
}
