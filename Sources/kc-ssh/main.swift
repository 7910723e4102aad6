import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

// kc-ssh: the SSH agent and the `kc ssh …` commands (docs/ssh.md). kc execs `kc-ssh ssh-agent
// ARGS` for `kc ssh-agent ARGS` and `kc-ssh ARGS` for `kc ssh ARGS`; it is its own program so
// that the `kc` client links no libcrypto.

let usage = """
    usage: kc ssh-agent [-s | -c]
           kc ssh add|generate|list|export-public …
    """

/// Writes `text` to standard error.
func complain(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

// Private keys, passphrases, perhaps a keychain's password pass through every mode: not
// dumpable from the first line on (no core file, /proc/PID/mem closed to the user's other
// processes), and no token or new password of kc's left readable in /proc/PID/environ
// (KC_PASSWORD: the agent wipes it below, `kc ssh …` takes it in KeychainPassword).
ProcessHardening.disableCoreDumps()
SecretEnvironment.wipe(["KC_TEAM_TOKEN", "KC_NEW_PASSWORD"])

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] {
    complain(usage + "\n")
    exit(arguments.isEmpty ? 2 : 0)
}
switch arguments[0] {
case AgentMain.word: exit(AgentMain.run(arguments.dropFirst()))
case let word where KeyCommands.words.contains(word): exit(KeyCommands.run(arguments))
default:
    complain("kc: unknown ssh command: \(TerminalSafe.escaped(arguments[0]))\n")
    exit(2)
}
