import ArgumentParser
import KeychainAgent
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc agent`: the agent process itself (started by `kc unlock`; hidden).
struct Agent: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the kc agent (kc unlock starts it), or stop it.",
        shouldDisplay: false
    )

    @Flag(help: "Stop the running agent; every key is wiped.")
    var stop = false

    func run() throws {
        if stop {
            try AgentClient().stop()
            return
        }
        AgentProcess.detach()
        let grace = Environment.get("KC_AGENT_GRACE").flatMap(Double.init) ?? 60
        try AgentServer(grace: grace).run()
    }
}
