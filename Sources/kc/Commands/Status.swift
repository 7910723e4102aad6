import ArgumentParser
import KeychainCore
import KeychainClient
import KeychainFormats
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kc status`: which keychains are unlocked and for how long. Does not reset timers.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the unlocked keychains and the time until each locks.",
        discussion: """
            Examples:
              kc status
              kc status -k work     # one keychain: unlocked (for how long) or locked
              kc status --json
              kc status -k team:infra

            Team keychains, held by the team agent, are listed as team:NAME.
            Asking does not reset any idle timer. With -k, a keychain that does not
            exist is exit 50; a locked one is exit 0 and prints "locked" (JSON: an
            empty list).
            """
    )

    @Option(name: Options.statusKeychain.names, parsing: .unconditional, help: Options.statusKeychain.help, completion: Options.statusKeychain.completion)
    var keychain: String?

    @Flag(name: Options.statusJSON.names, help: Options.statusJSON.help)
    var json = false

    func validate() throws {
        try KeychainChoice(keychain: keychain).validate()
    }

    func run() throws {
        // The file agent's keychains, then the team agent's (`team:NAME`).
        var list = try AgentClient().status() ?? []
        let team = try Session.teamAgent().status()
        list += team ?? []
        var chosen: String?
        if let keychain {
            let address = try KeychainChoice(keychain: keychain).address()
            try Session.checkExists(address)
            let real = address.agentPath
            list = list.filter { $0.path == real }
            chosen = real
        }
        if json {
            let objects = list.map { e in
                JSON.object([("path", JSON.string(e.path)), ("idle", String(e.idle)), ("maximum", String(e.maximum))])
            }
            Report.out(JSON.array(objects) + "\n")
            return
        }
        if list.isEmpty {
            Report.out(chosen.map { "\(TerminalSafe.escaped($0)): locked\n" } ?? "no keychain is unlocked\n")
        }
        for e in list {
            let idle = e.idle, maximum = e.maximum
            // The path comes from the agent (or whatever answers at its socket): escaped.
            Report.out(
                "\(TerminalSafe.escaped(e.path)): unlocked, locks in \(Self.duration(min(idle, maximum)))"
                    + " (idle \(Self.duration(idle)), at most \(Self.duration(maximum)))\n")
        }
        // A running team agent is said even when it holds nothing (it exits after its grace).
        if chosen == nil, let team, team.isEmpty {
            Report.out("the team agent (kc-team agent) runs and holds no team keychain\n")
        }
    }

    static func duration(_ seconds: Int) -> String {
        if seconds >= 3600 { return "\(seconds / 3600)h\(String(format2(seconds % 3600 / 60)))m" }
        if seconds >= 60 { return "\(seconds / 60)m\(String(format2(seconds % 60)))s" }
        return "\(seconds)s"
    }

    private static func format2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
