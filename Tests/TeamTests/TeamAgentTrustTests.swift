import Foundation
import Testing
import KeychainCore
import AgentWire
import KCTestSupport

/// The password (or a secret) for a team keychain goes only to the real team agent: the
/// `kc-team` installed beside kc, run by this user, not traced (as `AgentTrustTests` for
/// the file agent and kc).
@Suite struct TeamAgentTrustTests {
    func hex(_ s: String) -> String { Array(s.utf8).map { String(format: "%02x", $0) }.joined() }

    /// A same-uid process listening on team-agent.sock gets no team password: exit 22.
    @Test func unlockRefusesAnImpostorAtTheTeamAgentsSocket() throws {
        let t = try TeamHome()
        try t.makeTeamFile("infra")
        let log = try AgentImpostor.start(t.home, version: AgentProtocol.version, socket: "team-agent.sock")
        let out = try t.kc(["unlock", "-k", "team:infra"], password: KCHome.password)
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("is not the real kc agent") && out.stderr.contains("the password was not sent"), "\(out.stderr)")
        let frames = AgentImpostor.received(log)
        #expect(!frames.contains { $0.contains(hex(KCHome.password)) }, "the impostor received the password: \(frames)")
        #expect(frames.allSatisfy { $0.count <= 2 * 8 }, "only a bodiless status request reached it: \(frames)")
    }

    /// An impostor that says it holds the team keychain gets no secret from `kc add`.
    @Test func addRefusesAnImpostorThatSaysItHoldsTheTeamKeychain() throws {
        let t = try TeamHome()
        let log = try AgentImpostor.start(t.home, holds: "team:infra", version: AgentProtocol.version, socket: "team-agent.sock")
        let secret = "s3cret-for-the-real-team-agent-only"
        let out = try t.kc(["add", "-k", "team:infra", "-s", "svc", "-a", "me"], stdin: Data(secret.utf8))
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("the secret was not sent"), "\(out.stderr)")
        let frames = AgentImpostor.received(log)
        #expect(!frames.contains { $0.contains(hex(secret)) }, "the impostor received the secret: \(frames)")
    }

    /// The team agent is compared with kc-team, not with kc: the real kc agent, reached
    /// at team-agent.sock, is refused a team password. (As root, which sees the program of
    /// the non-dumpable kc agent; a normal user cannot, and kc then starts its own.)
    @Test(.enabled(if: geteuid() == 0, "needs CAP_SYS_PTRACE to see the kc agent's program"))
    func theKcAgentIsNotTheTeamAgent() throws {
        let t = try TeamHome()
        try t.home.createKeychain()
        try t.makeTeamFile("infra")
        // A real kc agent in another folder, its socket linked at the team agent's place.
        let other = t.home.directory + "/other-agent"
        var out = try t.kc(["unlock"], password: KCHome.password, extra: ["KC_AGENT_DIR": other])
        #expect(out.status == 0, "\(out.stderr)")
        defer { _ = try? t.kc(["agent", "--stop"], extra: ["KC_AGENT_DIR": other]) }
        try FileManager.default.createDirectory(
            atPath: t.home.directory + "/agent", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        #expect(symlink(other + "/agent.sock", t.teamSocket) == 0)
        out = try t.kc(["unlock", "-k", "team:infra"], password: "team-password-for-kc-team-only")
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("runs another program"), "\(out.stderr)")
        // The kc agent still holds its keychain and nothing else.
        out = try t.kc(["status"], extra: ["KC_AGENT_DIR": other])
        #expect(out.stdout.hasPrefix(t.home.defaultKeychain + ": unlocked") && !out.stdout.contains("team:"), "\(out.stdout)")
    }
}
