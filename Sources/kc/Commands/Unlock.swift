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

        Then `kc find -s github.com -w` needs no password. A keychain the agent
        already holds is not asked for again: kc says so and how long it stays
        unlocked. Exit 51 on a wrong password (the agent's state is unchanged).
        The password goes only to the real kc agent: the same program as this
        kc, not traced, run by you; otherwise kc sends nothing and exits 22
        (errSecCSReqFailed).
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Lock after this many seconds without use (default: the keychain's setting, 900).", valueName: "seconds"))
    var timeout: Int64?

    @Option(parsing: .unconditional, help: ArgumentHelp("Lock after this many seconds whatever happens (default: the keychain's setting, 43200).", valueName: "seconds"))
    var max: Int64?

    func validate() throws {
        try validateTimeouts(("--timeout", timeout), ("--max", max))
    }

    func run() throws {
        let chosen = keychain.path
        try Session.checkExists(chosen)
        let path = KeychainLocation.realPath(chosen)
        if let held = try alreadyHeld(path) {
            let locksIn = Status.duration(min(held.idle, held.maximum))
            Report.note("\(path) is already unlocked; it locks in \(locksIn) (idle \(Status.duration(held.idle)), at most \(Status.duration(held.maximum)))")
            Report.note("hint: `kc lock` first to unlock it again with its password, or give --timeout / --max to change the timers")
            return
        }
        let password = try PasswordSource.current(keychain.choice, path: path)
        try AgentClient().unlock(path: path, password: password, idle: timeout.map(UInt64.init) ?? 0, maximum: max.map(UInt64.init) ?? 0)
    }

    /// The agent's entry for `path` when asking for the password would only repeat what the
    /// agent already has: the keychain is held, no timer is being changed, and the password
    /// would come from a prompt. A password given by a script (stdin, a file, KC_PASSWORD)
    /// is still checked and the keychain unlocked again, as before.
    private func alreadyHeld(_ path: String) throws -> (idle: Int, maximum: Int)? {
        let choice = keychain.choice
        guard timeout == nil, max == nil, !choice.passwordStdin, choice.passwordFile == nil,
              PasswordSource.environmentPassword == nil else { return nil }
        // Only from an agent that passes the peer checks: an impostor that says "held" must
        // not silence the unlock that would have refused it (exit 22).
        var client = AgentClient()
        client.isKC = true
        guard let held = try? client.checkedStatus()?.first(where: { $0.path == path }) else { return nil }
        return (held.idle, held.maximum)
    }
}
