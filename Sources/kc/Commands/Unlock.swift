import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc unlock`: hands the password to the agent (started if needed), which then serves
/// every kc command of this user without a password until the keychain locks.
struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock a keychain in the kc agent until it is locked or times out.",
        discussion: """
        Examples:
          kc unlock                 # locks after 15 min idle, 12 h at most
          kc unlock --timeout 3600  # lock after an hour without use
          printf %s "$PASS" | kc unlock --password-stdin   # at the top of a CI job

        Then `kc find -s github.com -w` needs no password. Exit 51 on a wrong
        password (the agent's state is unchanged). The password goes only to the
        real kc agent: the same program as this kc, not traced, run by you;
        otherwise kc sends nothing and exits 22 (errSecCSReqFailed).
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Lock after this many seconds without use (default: the keychain's setting, 900).", valueName: "seconds"))
    var timeout: UInt64?

    @Option(parsing: .unconditional, help: ArgumentHelp("Lock after this many seconds whatever happens (default: the keychain's setting, 43200).", valueName: "seconds"))
    var max: UInt64?

    func validate() throws {
        try validateTimeouts(timeout, max)
    }

    func run() throws {
        let chosen = keychain.path
        try Session.checkExists(chosen)
        let path = KeychainLocation.realPath(chosen)
        let password = try PasswordSource.current(keychain.choice, path: path)
        try AgentClient().unlock(path: path, password: password, idle: timeout ?? 0, maximum: max ?? 0)
    }
}
