import ArgumentParser
import KeychainAgent
import KeychainClient
import KeychainCore
import AgentWire
import TeamCore
import TeamStore
#if canImport(Glibc)
import Glibc
#endif

/// `kc-team agent`: the team agent, which holds unlocked team keychains (`team:NAME`) and
/// serves kc's requests for them on `team-agent.sock` in the agent folder, with the same
/// protocol, hardening, locking and expiry as `kc agent` (`kc unlock -k team:NAME` starts
/// it); `--stop` ends it.
struct TeamAgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run the team agent (kc unlock -k team:NAME starts it), or stop it.",
        discussion: """
            The team agent holds the keys of unlocked team keychains in memory and
            answers kc's commands for -k team:NAME on the socket team-agent.sock,
            beside the kc agent's ($XDG_RUNTIME_DIR/kc, else /tmp/kc-UID;
            KC_AGENT_DIR overrides). With nothing unlocked it exits after 60 s
            (KC_AGENT_GRACE).

            Examples:
              kc-team agent --stop    # every team keychain locks
            """
    )

    @Flag(help: "Stop the running team agent; every key is wiped.")
    var stop = false

    func run() throws {
        if stop {
            try AgentClient(paths: .team).stop()
            return
        }
        AgentProcess.detach()
        let grace = getenv("KC_AGENT_GRACE").flatMap { Double(String(cString: $0)) } ?? 60
        try AgentServer(paths: .team, grace: grace, opener: Self.open).run()
    }

    /// Opens the team keychain an unlock names, `team:NAME`, with the device's team
    /// password or a runner token.
    /// - Throws: errSecParam for a path that is not `team:NAME`; what `TeamKeychains.open` throws.
    static func open(_ path: String, _ secret: borrowing SecureBytes, _ minimumGeneration: UInt64, _ revocation: KeyRevocation) throws -> Keychain {
        switch try KeychainAddress(agentPath: path) {
        case .team(let name):
            return try TeamKeychains.open(name: name, secret: secret, minimumGeneration: minimumGeneration, revocation: revocation)
        case .file:
            throw KeychainError(errSecParam, "the team agent holds team keychains (team:NAME), not \(path)")
        }
    }
}
