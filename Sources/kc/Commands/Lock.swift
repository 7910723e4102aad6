import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc lock`: wipes the agent's keys for one keychain or all (but an after-first-unlock
/// class key and what reads with it).
struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lock a keychain (or --all): the agent wipes its keys, but after-first-unlock items'.",
        discussion: """
            Examples:
              kc lock
              kc lock --all            # team keychains too
              kc lock -k team:infra    # in the team agent

            After it, commands need the password again (exit 36 when they cannot
            ask). Items added with --accessible after-first-unlock stay readable
            through the agent, read-only, until kc agent --stop or a reboot; stop
            the agent to forget them too. A keychain that does not exist is exit
            50 (a typo must not pass for a lock). Locking needs no password:
            --password-stdin and --password-file are refused (exit 2).
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Flag(name: Options.lockAll.names, help: Options.lockAll.help)
    var all = false

    func validate() throws {
        // A password given to lock is a mistake in a script (meant for unlock, say): it
        // would be read for nothing, or not read at all, and the mistake pass unseen.
        if keychain.passwordStdin || keychain.passwordFile != nil {
            throw ValidationError("kc lock needs no password: drop --password-stdin / --password-file (kc unlock takes them)")
        }
    }

    func run() throws {
        if all {
            // Both agents: the file agent and the team agent.
            for client in Session.allAgents() { try client.lock(path: nil) }
        } else if keychain.keychain == nil, Configuration.environmentKeychain == nil, let failure = Configuration.failure {
            // The keychain would be the file's, which kc refuses: lock them all, the safe
            // side for a screen-lock or logout hook, and say why.
            Report.note("warning: \(failure.message); locking every keychain")
            for client in Session.allAgents() { try client.lock(path: nil) }
        } else {
            let address = try keychain.choice.address()
            try Session.checkExists(address)
            let client: AgentClient
            switch address {
            case .file: client = AgentClient()
            case .team: client = Session.teamAgent()
            }
            try client.lock(path: address.agentPath)
        }
    }
}
