import ArgumentParser
import KeychainClient
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// `kc ssh …`: execs `kc-ssh …`, installed beside kc. Everything SSH (the agent, key
/// signing with libcrypto) lives in kc-ssh so that kc links no libcrypto (docs/ssh.md).
/// `KC.main` execs it before anything else; this command is what `kc --help`, the man
/// page and completion show, and runs only for `kc ssh --help`.
struct SSHCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh",
        abstract: "Keep SSH keys as kc key items (runs kc-ssh, installed beside kc).",
        discussion: """
            Subcommands: add, generate, list, export-public (kc-ssh --help).
            kc ssh-agent serves the keys to ssh, git and ssh-add.

            Exit 252 (errSecUnimplemented) when kc-ssh is not installed beside kc
            (make install puts it there). docs/ssh.md has the details.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The kc-ssh subcommand and its arguments.")
    var arguments: [String] = []

    /// kc-ssh's name beside kc.
    static let programName = "kc-ssh"

    /// kc-ssh's path: beside this kc.
    static var programPath: String { AgentClient.besideOwnExecutable(programName) }

    /// The arguments for kc-ssh when kc's command line is `kc ssh-agent …` or `kc ssh …`
    /// (not asking kc's own help for them), nil otherwise.
    static func passedOn(_ all: [String]) -> [String]? {
        guard all.count > 1 else { return nil }
        let rest = Array(all.dropFirst(2))
        let help = rest == ["--help"] || rest == ["-h"]
        switch all[1] {
        case SSHAgentCommand.word: return help ? nil : [SSHAgentCommand.word] + rest
        case "ssh": return help || rest.isEmpty ? nil : rest
        default: return nil
        }
    }

    /// Replaces this process with `kc-ssh ARGUMENTS` (the environment as it is).
    /// - Throws: errSecUnimplemented (exit 252) when kc-ssh cannot be run.
    static func exec(_ arguments: [String]) throws -> Never {
        let path = programPath
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, &argv)
        let code = errno
        for p in argv { free(p) }
        throw KeychainError(
            errSecUnimplemented, "SSH keys need kc-ssh, which is not installed beside kc: cannot run \(path): \(String(cString: strerror(code)))",
            hint: "install it with `make install`, which puts kc-ssh beside kc")
    }

    func run() throws {
        if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] {
            Report.out(Self.helpMessage() + "\n")
            return
        }
        try Self.exec(arguments)
    }
}

/// `kc ssh-agent [-s | -c] | --stop | --foreground`: kc's SSH agent, in kc-ssh.
struct SSHAgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-agent",
        abstract: "Serve SSH keys to ssh, git and ssh-add (runs kc-ssh, installed beside kc).",
        discussion: """
            Examples:
              eval "$(kc ssh-agent -s)"   # start it if needed; SSH_AUTH_SOCK for sh
              kc ssh-agent -c             # the same for csh
              kc ssh-agent --stop
              kc ssh-agent --foreground   # for a systemd user unit

            The socket is ssh-agent.sock in kc's agent folder. It serves the keys
            ssh-add gives it (in memory only) and the SSH key items of unlocked
            keychains. Exit 252 (errSecUnimplemented) when kc-ssh is not installed
            beside kc. docs/ssh.md has the details.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "-s, -c, --stop or --foreground.")
    var options: [String] = []

    /// The subcommand's name on kc's command line, and kc-ssh's first word for it.
    static let word = "ssh-agent"

    func run() throws {
        if options == ["--help"] || options == ["-h"] {
            Report.out(Self.helpMessage() + "\n")
            return
        }
        try SSHCommand.exec([Self.word] + options)
    }
}
