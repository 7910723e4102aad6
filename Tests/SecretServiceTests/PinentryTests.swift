import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// A locked keychain where someone can answer: the provider asks through pinentry on the
/// user's terminal (here a tmux pane, read and typed into as a person would), checks the
/// password with the agent, asks again after a wrong one, and the client gets its secret.
@Suite struct PinentryTests {
    /// A tmux server with one pane, private to the test.
    final class Pane {
        let socket: String
        init(_ home: KCHome) throws {
            socket = home.directory + "/tmux.sock"
            let out = try Spawn.run(
                ["/usr/bin/tmux", "-S", socket, "new-session", "-d", "-x", "100", "-y", "30", "sleep 120"],
                environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm"], timeout: 20)
            guard out.status == 0 else { throw KeychainError(errSecIO, "tmux did not start: \(out.stderr)") }
        }
        deinit { _ = try? Spawn.run(["/usr/bin/tmux", "-S", socket, "kill-server"], environment: ["PATH": "/usr/bin:/bin"], timeout: 10) }
        func tmux(_ arguments: [String]) throws -> String {
            try Spawn.run(["/usr/bin/tmux", "-S", socket] + arguments, environment: ["PATH": "/usr/bin:/bin"], timeout: 10).stdout
        }
        var tty: String { get throws { try tmux(["display", "-p", "#{pane_tty}"]).trimmingCharacters(in: .whitespacesAndNewlines) } }
        var screen: String { (try? tmux(["capture-pane", "-p"])) ?? "" }
        /// Waits up to 15 s for `text` on the screen.
        func waitFor(_ text: String) throws -> Bool {
            for _ in 0..<300 {
                if screen.contains(text) { return true }
                usleep(50_000)
            }
            return false
        }
        func type(_ text: String) throws { _ = try tmux(["send-keys", "-l", text]); _ = try tmux(["send-keys", "Enter"]) }
    }

    @Test func pinentryOnTheTerminalUnlocksAfterAWrongPassword() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["add", "-s", "svc", "-a", "u", "-w", "s3cr3t"], password: KCHome.password).status == 0)
        let pane = try Pane(home)
        let tty = try pane.tty
        #expect(tty.hasPrefix("/dev/pts/"), "\(tty)")
        let bus = try PrivateBus(home, promptTimeout: 30, provider: ["--pinentry", "/usr/bin/pinentry-curses", "--tty", tty])
        let lookup = try Spawn.start(
            ["/usr/bin/secret-tool", "lookup", "service", "svc", "account", "u"],
            environment: bus.environment, timeout: 45)
        #expect(try pane.waitFor("kc keychain login"), "the dialog names the keychain: \(try pane.screen)")
        try pane.type("not the password")
        #expect(try pane.waitFor("Wrong password"), "\(pane.screen)")
        try pane.type(KCHome.password)
        let out = try lookup.finish()
        #expect(out.status == 0 && out.stdout == "s3cr3t", "\(out.stdout)\(out.stderr)")
        #expect(try home.kc(["status", "--json"]).stdout.contains("login.keychain-db"), "unlocked in the agent, as kc unlock does")
        #expect(!pane.screen.contains(KCHome.password), "never echoed")
    }

    /// Cancelling the dialog dismisses the prompt at once: the client gets no secret and
    /// does not wait for the timeout.
    @Test func cancellingTheDialogDismisses() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["add", "-s", "svc", "-a", "u", "-w", "s3cr3t"], password: KCHome.password).status == 0)
        let pane = try Pane(home)
        let bus = try PrivateBus(home, promptTimeout: 60, provider: ["--pinentry", "/usr/bin/pinentry-curses", "--tty", try pane.tty])
        let started = Date()
        let lookup = try Spawn.start(
            ["/usr/bin/secret-tool", "lookup", "service", "svc", "account", "u"],
            environment: bus.environment, timeout: 45)
        #expect(try pane.waitFor("kc keychain login"), "\(pane.screen)")
        // pinentry-curses: Tab to <OK>, Tab to <Cancel>, Enter.
        for key in ["Tab", "Tab", "Enter"] {
            _ = try pane.tmux(["send-keys", key])
            usleep(200_000)
        }
        let out = try lookup.finish()
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)")
        #expect(Date().timeIntervalSince(started) < 30, "dismissed when cancelled, not after the 60 s timeout")
    }
}
