import ArgumentParser
import KeychainAgent
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc agent`: the agent process itself (started by `kc unlock`), or `--stop` to end it.
/// Listed in `kc --help` and the man page: users meet it in `ps` and stop it by hand.
struct Agent: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the kc agent (kc unlock starts it), or stop it.",
        discussion: """
            The agent holds the keys of unlocked keychains in memory, never on disk,
            and answers the other commands on a private socket ($XDG_RUNTIME_DIR/kc,
            else /tmp/kc-UID; KC_AGENT_DIR overrides). `kc unlock` starts it when
            none runs; with nothing unlocked it exits after 60 s (KC_AGENT_GRACE).
            Team keychains have their own agent, kc-team agent, on the socket
            team-agent.sock in the same folder.

            Examples:
              kc agent --stop     # every keychain locks: both agents wipe their keys
            """
    )

    @Flag(name: Options.stop.names, help: Options.stop.help)
    var stop = false

    func run() throws {
        if stop {
            // The team agent too (kc-team agent): every key goes.
            for client in Session.allAgents() { try client.stop() }
            return
        }
        AgentProcess.detach()
        let grace = Environment.get("KC_AGENT_GRACE").flatMap(Double.init) ?? 60
        try AgentServer(grace: grace).run()
    }
}
