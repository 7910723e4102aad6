import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc team …`: execs `kc-team …`, installed beside kc, with the arguments as they are and
/// this environment. kc-team is its own program so that kc links no PostgreSQL client
/// (docs/team.md). `KC.main` execs it before anything else, so kc-team receives the
/// environment kc was given (KC_PASSWORD included: kc takes it out of its own at start-up);
/// this command is what `kc --help`, the man page and completion show, and runs only for
/// `kc team --help`.
struct TeamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Manage team keychains on PostgreSQL (runs kc-team, installed beside kc).",
        discussion: """
            A team keychain is used as -k team:NAME by every command; kc team
            creates, joins and administers them. Its subcommands: create, join,
            add, add-runner, remove, members, head, verify, agent (kc-team --help).

            Keep a database password off the command line, which every local
            user can read: give create and add-runner the DSN with --dsn-file
            FILE or --dsn-stdin, or keep the password in ~/.pgpass. Each
            statement to the server has a deadline, KC_TEAM_ROUND_TRIP_TIMEOUT
            seconds (default 30): past it, exit 53.

            Examples:
              kc team join kct1:...       # this device asks to join
              kc unlock -k team:infra     # the team password of this device
              kc find -k team:infra -s deploy -w

            Exit 252 (errSecUnimplemented) when kc-team is not installed beside kc
            (make install puts it there). docs/team.md has the details.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The kc-team subcommand and its arguments.")
    var arguments: [String] = []

    /// The subcommand's name on kc's command line.
    static let word = "team"

    /// kc-team's path: beside this kc.
    static var programPath: String { AgentClient.besideOwnExecutable(AgentClient.teamProgramName) }

    /// kc-team's path, when it is installed beside kc.
    /// - Throws: errSecUnimplemented (exit 252) naming where it looked.
    static func program() throws -> String {
        let path = programPath
        guard access(path, X_OK) == 0 else { throw missing(path, errno) }
        return path
    }

    /// The error for a kc-team that cannot be run.
    static func missing(_ path: String, _ code: Int32) -> KeychainError {
        KeychainError(
            errSecUnimplemented, "team keychains need kc-team, which is not installed beside kc: cannot run \(path): \(String(cString: strerror(code)))",
            hint: "install it with `make install`, which puts kc-team beside kc")
    }

    /// Replaces this process with `kc-team ARGUMENTS` (the environment as it is), each
    /// `--dsn` value passed through a pipe rather than the command line (`TeamDSNHandOff`).
    /// - Throws: errSecUnimplemented when kc-team cannot be run; returns never otherwise.
    static func exec(_ arguments: ArraySlice<String>) throws -> Never {
        let path = programPath
        let passed = try TeamDSNHandOff.arguments(Array(arguments))
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + passed.arguments).map { strdup($0) } + [nil]
        TeamDSNHandOff.inheritable(passed.descriptors)
        execv(path, &argv)
        let code = errno
        for p in argv { free(p) }
        for fd in passed.descriptors { close(fd) }
        throw missing(path, code)
    }

    func run() throws {
        // `kc team --help`: kc's own help (what the man page has); anything else reached here
        // only if the early exec in `KC.main` was skipped.
        if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] {
            Report.out(Self.helpMessage() + "\n")
            return
        }
        try Self.exec(arguments[...])
    }
}
