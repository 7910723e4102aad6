/// `kc ssh add|generate|list|export-public …`: SSH keys kept as kc key items (being built for
/// issue 34).
enum KeyCommands {
    /// The subcommands of `kc ssh`.
    static let words: Set<String> = ["add", "generate", "list", "export-public"]

    /// Runs `kc ssh ARGUMENTS`; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        complain("kc: kc ssh \(arguments[0]) is not built yet\n")
        return 2
    }
}
