import Foundation
import KCTestSupport
import Testing

/// `kc ssh-agent --foreground` (a service manager's agent) lives long: kc's password and
/// team token it was started with must not stay readable in /proc/PID/environ, which keeps
/// a variable's bytes after `unsetenv`.
@Suite struct ForegroundEnvironmentTests {
    @Test func theForegroundAgentKeepsNoPasswordInItsEnvironment() throws {
        for throughKC in [true, false] {
            let f = try SSHAgentFixture(
                extra: ["KC_PASSWORD": "hunter2-secret", "KC_TEAM_TOKEN": "kcr1:token-secret", "KC_NEW_PASSWORD": "new-secret"],
                throughKC: throughKC)
            // Root reads /proc/PID/environ even of a non-dumpable process.
            let environ = try #require(FileManager.default.contents(atPath: "/proc/\(f.agent.pid)/environ"))
            let text = String(decoding: environ, as: UTF8.self)
            #expect(text.contains("KC_AGENT_DIR="), "not the agent's environment: \(text)")
            for secret in ["hunter2-secret", "token-secret", "new-secret"] {
                #expect(!text.contains(secret), "\(secret) in /proc/PID/environ (through kc: \(throughKC))")
            }
        }
    }
}
