/// `kc ssh-agent …`: the SSH agent (being built for issue 34).
enum AgentMain {
    /// The first word kc passes for `kc ssh-agent`.
    static let word = "ssh-agent"

    /// Runs `kc ssh-agent ARGUMENTS`; returns the exit status.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        complain("kc: the SSH agent is not built yet\n")
        return 2
    }
}
