import AgentWire
import KeychainClient
import KeychainCore
import POSIXSupport
import SSHAgent
#if canImport(Glibc)
import Glibc
#endif

/// `kc ssh-agent [-s | -c] | --stop | --foreground`: kc's SSH agent (docs/ssh.md, "The
/// agent"). `-s` / `-c` print the lines that point `SSH_AUTH_SOCK` at its socket in the
/// agent folder, starting it detached when none answers there; `--foreground` serves in
/// this process (a systemd user unit); `--stop` stops the running one.
enum AgentMain {
    /// The first word kc passes for `kc ssh-agent`.
    static let word = "ssh-agent"

    static let usage = """
        usage: kc ssh-agent [-s | -c] | --stop | --foreground
          -s             print Bourne shell lines (the default unless SHELL ends in csh):
                           eval "$(kc ssh-agent -s)"
          -c             print csh lines
          --stop         stop the running SSH agent
          --foreground   serve in this process until stopped (a systemd user unit)
        The socket is ssh-agent.sock in kc's agent folder ($KC_AGENT_DIR, else
        $XDG_RUNTIME_DIR/kc, else /tmp/kc-UID). docs/ssh.md has the details.

        """

    /// Runs `kc ssh-agent ARGUMENTS`; returns the exit status.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var csh: Bool?
        var mode = "print"
        for word in arguments {
            switch word {
            case "-s": csh = false
            case "-c": csh = true
            case "--stop": mode = "stop"
            case "--foreground": mode = "foreground"
            case "--detach": mode = "detach"
            case "-h", "--help":
                _ = usage.withCString { write(1, $0, strlen($0)) }
                return 0
            default:
                complain("kc: unknown option '\(TerminalSafe.escaped(word))'\n" + usage)
                return 2
            }
        }
        // A long-lived agent keeps no password or token of kc's in its environment
        // (kc execs kc-ssh before taking them out of its own), nor passes one on.
        for name in ChildEnvironment.withheld { unsetenv(name) }
        do {
            let paths = AgentPaths()
            try paths.check(create: true)
            let socket = paths.directory + "/" + SSHAgentServer.socketName
            guard socket.utf8.count < 108 else {
                throw KeychainError(errSecParam, "the socket path \(socket) is too long for a Unix socket", hint: "set KC_AGENT_DIR to a shorter folder")
            }
            switch mode {
            case "stop": return try stop(socket)
            case "foreground", "detach":
                if mode == "detach" { Detach.fromCaller() }
                // A `--user-presence` keychain key asks for its keychain's password through
                // askpass (that is its confirmation); other keys are confirmed as `ssh-add -c`.
                let confirmation = SignatureConfirmation.fromEnvironment()
                let presence = KeySources.askpass(confirmation)
                let server = SSHAgentServer(
                    directory: paths.directory, sources: { KeySources.all(presence: presence) }, confirmation: confirmation)
                guard try server.run() else {
                    if mode == "foreground" { complain("kc: another kc SSH agent already serves \(socket)\n") }
                    return mode == "foreground" ? 1 : 0
                }
                return 0
            default:
                let useCsh = csh ?? (getenv("SHELL").map { String(cString: $0).hasSuffix("csh") } ?? false)
                try start(socket)
                let quoted = ShellWord.quoted(socket)
                let lines = useCsh ? "setenv SSH_AUTH_SOCK \(quoted);\n" : "SSH_AUTH_SOCK=\(quoted); export SSH_AUTH_SOCK;\n"
                _ = lines.withCString { write(1, $0, strlen($0)) }
                return 0
            }
        } catch let error as KeychainError {
            complain("kc: \(TerminalSafe.escaped(error.message))\n" + (error.hint.map { "kc: hint: \(TerminalSafe.escaped($0))\n" } ?? ""))
            return exitCode(for: error.status)
        } catch {
            complain("kc: \(error)\n")
            return 1
        }
    }

    /// Starts the agent detached unless one answers at `socket`, then waits until it does.
    static func start(_ socket: String) throws {
        if let pid = SSHAgentProbe.answering(socket) {
            complain("kc: the SSH agent (pid \(pid)) serves \(socket)\n")
            return
        }
        let program = AgentClient.ownExecutable
        let environment = ChildEnvironment.inherited().map { "\($0.0)=\($0.1)" }
        switch DetachedChild.spawn(program, arguments: [program, word, "--detach"], environment: environment) {
        case .success: break
        case .failure(let why):
            throw KeychainError(errSecIO, "cannot start the SSH agent (\(program)): \(why.description)")
        }
        let deadline = Deadline.after(seconds: 10)
        while Deadline.now < deadline {
            if let pid = SSHAgentProbe.answering(socket) {
                complain("kc: started the SSH agent (pid \(pid)) at \(socket)\n")
                return
            }
            usleep(20_000)
        }
        throw KeychainError(errSecNotAvailable, "the SSH agent did not answer at \(socket) within 10 s")
    }

    /// Stops the agent answering at `socket` (a process of this user) and waits until it
    /// has gone.
    static func stop(_ socket: String) throws -> Int32 {
        guard let pid = SSHAgentProbe.answering(socket) else {
            complain("kc: no SSH agent answers at \(socket)\n")
            return 0
        }
        guard kill(pid, SIGTERM) == 0 else { throw KeychainError(errSecIO, "cannot stop the SSH agent (pid \(pid))") }
        let deadline = Deadline.after(seconds: 10)
        while Deadline.now < deadline {
            if kill(pid, 0) != 0 && errno == ESRCH { return 0 }
            if SSHAgentProbe.answering(socket) == nil && access(socket, F_OK) != 0 { return 0 }
            usleep(20_000)
        }
        throw KeychainError(errSecIO, "the SSH agent (pid \(pid)) did not stop within 10 s")
    }
}

/// Whether an SSH agent of this user answers at a socket.
enum SSHAgentProbe {
    /// The pid of the process of this user that answers REQUEST_IDENTITIES at `socket`
    /// within 2 s, nil when none does.
    static func answering(_ socket: String) -> pid_t? {
        guard let connection = try? UnixSocket.connect(to: socket) else { return nil }
        guard let peer = try? connection.peerCredentials(), peer.uid == geteuid(), peer.pid > 0 else { return nil }
        let deadline = Deadline.after(seconds: 2)
        do {
            try connection.writeAll([0, 0, 0, 1, SSHAgentMessage.requestIdentities], until: deadline)
            var header = [UInt8](repeating: 0, count: 5)
            try header.withUnsafeMutableBytes { try connection.readExactly(5, into: $0, until: deadline) }
            return header[4] == SSHAgentMessage.identitiesAnswer ? peer.pid : nil
        } catch {
            return nil
        }
    }
}
