import ArgumentParser
import KeychainCore
import KeychainClient
import TeamCore
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

            With --recovery, the recovery key (kc keyslot add --recovery) opens the
            keychain instead of its password: typed at a prompt (echo off), or
            given with --password-stdin or --password-file; with or without its
            dashes, in either case. It goes to the agent as a password does. Exit
            51 on a wrong recovery key.

            A keychain with a TPM2 slot (kc keyslot add --tpm2) opens from the
            machine's TPM first, with no password (a PIN slot asks for its PIN, or
            reads --pin-file); when the TPM cannot give the key (no TPM, another
            TPM, changed PCRs, a wrong PIN), kc says why and asks for the password.
            A password given by --password-stdin, --password-file or KC_PASSWORD
            skips the TPM. --tpm2-only never prompts: the TPM2 slot or nothing
            (exit 53 no TPM, 22 PCRs changed, 51 wrong PIN, 36 a PIN slot without
            --pin-file), for a systemd user unit (docs/tpm.md):
              kc unlock --tpm2-only --max 86400

            A team keychain (-k team:NAME) goes to the team agent, kc-team agent
            (started when none runs), with this device's team password. A CI
            runner gives its token instead: --team-token-file FILE, or the variable
            KC_TEAM_TOKEN (read once, removed from the environment, never passed to
            a child); the token names its team, so -k is not needed:
              kc unlock --team-token-file "$RUNNER_TOKEN_FILE"
              kc find -k team:infra -s deploy -w
            """
    )

    @Option(name: Options.teamTokenFile.names, parsing: .unconditional, help: Options.teamTokenFile.help, completion: Options.teamTokenFile.completion)
    var teamTokenFile: String?

    @OptionGroup var keychain: KeychainOptions

    @Option(name: Options.unlockTimeout.names, parsing: .unconditional, help: Options.unlockTimeout.help, completion: Options.unlockTimeout.completion)
    var timeout: Int64?

    @Option(name: Options.unlockMax.names, parsing: .unconditional, help: Options.unlockMax.help, completion: Options.unlockMax.completion)
    var max: Int64?

    @Flag(name: Options.unlockRecovery.names, help: Options.unlockRecovery.help)
    var recovery = false

    @Flag(name: Options.unlockTPM2Only.names, help: Options.unlockTPM2Only.help)
    var tpm2Only = false

    @Option(name: Options.pinFile.names, parsing: .unconditional, help: Options.pinFile.help, completion: Options.pinFile.completion)
    var pinFile: String?

    func validate() throws {
        try validateTimeouts(("--timeout", timeout), ("--max", max))
        if teamTokenFile != nil && (keychain.passwordStdin || keychain.passwordFile != nil) {
            throw ValidationError("--team-token-file is the team keychain's secret: give no password with it")
        }
        if teamTokenFile?.isEmpty == true { throw ValidationError("--team-token-file is empty: give the token's file") }
        if recovery && teamTokenFile != nil { throw ValidationError("--recovery opens a keychain file: give no team token with it") }
        if tpm2Only && (recovery || teamTokenFile != nil) {
            throw ValidationError("--tpm2-only opens with the TPM2 slot: give no --recovery or team token with it")
        }
        if tpm2Only && (keychain.passwordStdin || keychain.passwordFile != nil) {
            throw ValidationError("--tpm2-only takes no password: a PIN comes from --pin-file")
        }
        if pinFile != nil && (recovery || teamTokenFile != nil) {
            throw ValidationError("--pin-file is a TPM2 slot's PIN: not with --recovery or a team token")
        }
        if pinFile?.isEmpty == true { throw ValidationError("--pin-file is empty: give the PIN's file") }
    }

    func run() throws {
        let address = try keychain.choice.address()
        if recovery { return try unlockWithRecoveryKey(address) }
        if tpm2Only, case .team = address {
            throw KeychainError(errSecParam, "\(address) is a team keychain: it has no TPM2 slot", hint: "unlock it with its team password")
        }
        if let token = try runnerToken(address) {
            return try unlockTeam(token: token, chosen: address)
        }
        switch address {
        case .team(let name): return try unlockTeam(name: name)
        case .file: break
        }
        try Session.checkExists(address)
        let path = address.agentPath
        if let held = try alreadyHeld(path) {
            let locksIn = Status.duration(min(held.idle, held.maximum))
            Report.note("\(path) is already unlocked; it locks in \(locksIn) (idle \(Status.duration(held.idle)), at most \(Status.duration(held.maximum)))")
            Report.note("hint: `kc lock` first to unlock it again with its password, or give --timeout / --max to change the timers")
            return
        }
        try Keychain.checkFile(at: path)   // "not a kc keychain" before any "locked"
        let choice = keychain.choice
        if tpm2Only || (!choice.passwordStdin && choice.passwordFile == nil && PasswordSource.environmentPassword == nil) {
            if try TPM2Unlock(path: path, pinFile: pinFile, only: tpm2Only).run(idle: idle, maximum: maximum) { return }
        }
        let password = try PasswordSource.current(keychain.choice, path: path)
        try AgentClient().unlock(path: path, password: password, idle: idle, maximum: maximum)
    }

    /// `--recovery`: reads the recovery key (from --password-stdin or --password-file as a
    /// password would come, else a prompt with echo off), and hands its 32 bytes to the
    /// agent, established as the real one first, as `unlock` hands a password.
    private func unlockWithRecoveryKey(_ address: KeychainAddress) throws {
        guard case .file = address else {
            throw KeychainError(errSecParam, "\(address) is a team keychain: it has no recovery key", hint: "unlock it with its team password")
        }
        try Session.checkExists(address)
        let path = address.agentPath
        try Keychain.checkFile(at: path)
        let key = try RecoveryKeySource.read(keychain.choice, path: path)
        try AgentClient().unlock(path: path, slot: .recovery, secret: key, idle: idle, maximum: maximum)
    }

    /// The idle timeout asked of the agent: --timeout, else the configuration file's
    /// `idle-timeout`, else 0, the keychain's own (`kc settings`).
    private var idle: UInt64 { timeout.map(UInt64.init) ?? Configuration.idleTimeout }

    /// The absolute timeout asked of the agent: --max, else the file's `max-timeout`, else
    /// 0, the keychain's own.
    private var maximum: UInt64 { max.map(UInt64.init) ?? Configuration.maxTimeout }

    /// The agent's entry for `path` when asking for the password would only repeat what the
    /// agent already has: the keychain is held, no timer is being changed, and the password
    /// would come from a prompt. A password given by a script (stdin, a file, KC_PASSWORD)
    /// is still checked and the keychain unlocked again, as before.
    private func alreadyHeld(_ path: String, by agent: AgentClient? = nil) throws -> (idle: Int, maximum: Int)? {
        let choice = keychain.choice
        guard timeout == nil, max == nil, !choice.passwordStdin, choice.passwordFile == nil,
            PasswordSource.environmentPassword == nil
        else { return nil }
        // Only from an agent that passes the peer checks: an impostor that says "held" must
        // not silence the unlock that would have refused it (exit 22).
        var client = AgentClient()
        client.isKC = true
        guard let held = try? (agent ?? client).checkedStatus()?.first(where: { $0.path == path }) else { return nil }
        return (held.idle, held.maximum)
    }

    /// The runner token to unlock with: --team-token-file, else $KC_TEAM_TOKEN unless -k or
    /// $KC_KEYCHAIN chose a keychain file; nil when there is none.
    /// - Throws: errSecParam when --team-token-file is given with a keychain file's -k.
    private func runnerToken(_ chosen: KeychainAddress) throws -> SecureBytes? {
        let choseFile: Bool
        switch chosen {
        case .file: choseFile = keychain.choice.isChosenByFlagOrEnvironment
        case .team: choseFile = false
        }
        if let file = teamTokenFile {
            if choseFile {
                throw KeychainError(
                    errSecParam, "--team-token-file unlocks a team keychain, but -k or KC_KEYCHAIN chose \(chosen)",
                    hint: "leave -k out (the token names its team), or give -k team:NAME")
            }
            return try Readers.droppingOneNewline(Readers.readFile(file, limit: Self.maxToken, what: "runner token file", warnIfShared: true))
        }
        guard PasswordSource.environmentTeamToken != nil, !choseFile else { return nil }
        return PasswordSource.environmentTeamToken.take()
    }

    /// The longest runner token read: its DSN is at most 64 KiB, base64 a third more.
    static let maxToken = 96 * 1024

    /// Hands a runner token to the team agent for the team it names (which -k, when given,
    /// must name too).
    private func unlockTeam(token: borrowing SecureBytes, chosen: KeychainAddress) throws {
        let location = KeychainAddress.team(try RunnerToken.parse(token).name)
        if keychain.choice.isChosenByFlagOrEnvironment {
            switch chosen {
            case .team where chosen != location:
                throw KeychainError(
                    errSecParam, "the runner token is for \(location), not \(chosen)",
                    hint: "leave -k out: the token names its team")
            case .team, .file: break   // a file was refused before the token was read
            }
        }
        try sendTeamUnlock(location, secret: token)
    }

    /// Unlocks the team keychain `team:NAME` in the team agent with this device's team
    /// password (no prompt when the agent already holds it, as for a keychain file).
    private func unlockTeam(name: String) throws {
        let location = KeychainAddress.team(name)
        try Session.checkExists(location)
        if let held = try alreadyHeld(location.agentPath, by: Session.teamAgent()) {
            let locksIn = Status.duration(min(held.idle, held.maximum))
            Report.note(
                "\(location) is already unlocked; it locks in \(locksIn) (idle \(Status.duration(held.idle)), at most \(Status.duration(held.maximum)))")
            Report.note("hint: `kc lock -k \(location)` first to unlock it again with its password, or give --timeout / --max to change the timers")
            return
        }
        let password = try PasswordSource.team(keychain.choice, location: location.description)
        try sendTeamUnlock(location, secret: password)
    }

    /// The unlock request for a team keychain, to the team agent (`kc-team agent`, beside
    /// this kc, started when none runs).
    private func sendTeamUnlock(_ location: KeychainAddress, secret: borrowing SecureBytes) throws {
        let program = try TeamCommand.program()
        try Session.teamAgent().unlock(
            path: location.agentPath, password: secret, idle: idle, maximum: maximum,
            executable: program, environment: AgentClient.teamAgentEnvironment)
    }
}
