import ArgumentParser

/// The `kc-team` command (`kc team …`): the team agent and the commands that create, join
/// and administer team keychains (docs/team.md).
struct KCTeam: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kc-team",
        abstract: "Team keychains on PostgreSQL: the team agent and the team commands (kc team ...).",
        discussion: """
            A team keychain is used as -k team:NAME by every kc command, through the
            team agent (kc-team agent), which kc unlock starts.
            """,
        subcommands: [
            Create.self, Join.self, Add.self, AddRunner.self, Remove.self, Members.self, Head.self, Verify.self,
            Heartbeat.self, TeamAgentCommand.self
        ]
    )
}
