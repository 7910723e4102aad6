import ArgumentParser
import KeychainCore
import TeamStore

// kc-team: team keychains on PostgreSQL (docs/team.md). `kc team …` execs it; it is its own
// program so that the `kc` client links no PostgreSQL client.
struct Team: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kc team",
        abstract: "Team keychains on PostgreSQL.",
        subcommands: [Create.self, Join.self, Add.self, AddRunner.self, Remove.self, Members.self, Head.self, Verify.self, Heartbeat.self]
    )
}
Team.main()
