import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide set-up done before anything else: a private umask, and the checks on
/// argv that Swift's `CommandLine.arguments` would hide.
enum Startup {
    /// Every file kc creates is private (0600 / 0700), whatever the caller's umask; no core
    /// dump can hold a key or a password; password variables leave the environment.
    static func prepare() {
        umask(0o077)
        ProcessHardening.disableCoreDumps()
        PasswordSource.captureEnvironment()
    }

    /// Swift repairs invalid UTF-8 in argv with U+FFFD, which would silently store a
    /// different attribute value; refuse such arguments instead.
    static func checkArgumentsAreUTF8() throws {
        for i in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if String(validating: bytes, as: UTF8.self) == nil {
                throw KeychainError(
                    errSecParam, "argument \(i) is not valid UTF-8",
                    hint: "attribute values must be UTF-8 text; store binary secrets with --data-file or stdin")
            }
        }
    }

    /// Whether a broken configuration file must not stop the command line (`arguments`
    /// normalised, so the command is `arguments[1]`): the version, `kc error` (the way to
    /// read what an exit code means), a shell's Tab (`---completion`, which then offers the
    /// default keychain's names rather than print an error into the command line being
    /// typed), the agent (which gets its timeouts with each unlock), the clipboard's keeper
    /// (which must clear what was copied whatever the file now says), and `kc lock` and
    /// `kc status`, which a screen-lock or logout hook runs and which must work whatever
    /// the file says (a bare `kc lock` then locks every keychain, `Lock`). Help is
    /// `asksForHelp`'s.
    static func ignoresConfiguration(_ arguments: [String]) -> Bool {
        guard arguments.count > 1 else { return true }
        // A switch, not `[…].contains`: kc find's start-up pays for no array of strings.
        switch arguments[1] {
        case "--help", "-h", "help", "--version", "--generate-completion-script", "---completion", "error", "agent", "lock", "status",
            ClipboardKeeper.subcommand:
            return true
        default: return arguments[1].hasPrefix("--generate-completion-script=")
        }
    }

    /// Whether the command line may ask for help (`--help` or `-h` after the command, as
    /// `kc config --help`): then the file is checked only once ArgumentParser has parsed
    /// the line, so help is printed whatever the file holds, and a command that runs
    /// (the word was an option's value) still stops at a bad file.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        var index = 2
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return false }
            if word == "--help" || word == "-h" { return true }
            index += 1
        }
        return false
    }

    /// Flushes nothing (kc writes with write(2)) and exits.
    static func exit(_ code: Int32) -> Never {
        Glibc.exit(code)
    }
}
