import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// How kc's commands reach their keychain: a `KeychainSession` (the agent while it holds the
/// keychain, else opened here) with kc's password sources and messages.
enum Session {
    /// Whether the unsafe-folder warning was printed (once per process).
    nonisolated(unsafe) private static var warnedAboutFolder = false

    /// What to do when no keychain is at the chosen path.
    static func missingHint(_ path: String) -> String {
        "create it with `kc create \(path)`, or choose another with -k, KC_KEYCHAIN or the config file (`kc config`)"
    }

    /// A session on the existing chosen keychain. - Parameter lockedHint: the hint when it is
    /// locked and no password can be had (`PasswordSource.current`).
    /// - Throws: errSecNoSuchKeychain when it is missing.
    static func open(_ options: KeychainChoice, lockedHint: String? = nil) throws -> KeychainSession {
        var typed = false
        let session = try KeychainSession(address: options.address(), agent: agent(options), missingHint: missingHint(options.path)) { path in
            try PasswordSource.current(options, path: path, lockedHint: lockedHint, typed: &typed)
        }
        session.presence = PresenceSource.ask
        session.askAgain = { _, wrong in UnlockOnPrompt.askAgain(typed: typed, wrong: wrong) }
        session.didOpen = { path, password in
            if typed { UnlockOnPrompt.hand(path: path, password: password) }
        }
        return session
    }

    /// A session on a command's second keychain (`kc move --to`): the agent when it holds
    /// it, else `PasswordSource.second`. - Throws: errSecNoSuchKeychain when it is missing.
    static func openSecond(_ options: KeychainChoice) throws -> KeychainSession {
        let session = try KeychainSession(address: options.address(), agent: agent(options), missingHint: missingHint(options.path)) { path in
            try PasswordSource.second(path: path)
        }
        session.presence = PresenceSource.ask
        return session
    }

    /// The agent client for a command on a keychain. When the agent folder is unsafe (the
    /// `/tmp/kc-UID` fallback made by another account) and a password can be had, kc warns
    /// once and works without the agent; without a password the error says what to do.
    static func agent(_ options: KeychainChoice) -> AgentClient {
        var client = AgentClient()
        client.isKC = true
        let hasPassword =
            options.passwordStdin || options.passwordFile != nil
            || PasswordSource.environmentPassword != nil || Terminal.isAvailable
        if hasPassword {
            client.unsafeFolder = .ignore { error in
                guard !Session.warnedAboutFolder else { return }
                Session.warnedAboutFolder = true
                Report.note("warning: \(error.message); not using the kc agent, opening the keychain with its password here")
                if let hint = error.hint { Report.note("hint: \(hint)") }
            }
        }
        return client
    }

    /// The keychain, creating the default one on first use (kc add).
    static func openOrCreateDefault(_ options: KeychainChoice, profile: KDFProfile) throws -> KeychainSession {
        let path = options.path
        if !options.isExplicit && !KeychainSession.exists(path) {
            let password = try PasswordSource.forNewKeychain(options, path: path)
            let keychain = try Keychain.create(at: path, password: password, profile: profile)
            Report.note("created the keychain \(path)")
            return KeychainSession(opened: keychain)
        }
        return try open(options)
    }

    /// Opens an existing keychain in this process with its password (commands that need
    /// the password itself: passwd, settings). - Throws: errSecParam for a team keychain,
    /// which is never opened in kc.
    static func openWithPassword(_ options: KeychainChoice) throws -> Keychain {
        try withPassword(options) { keychain, _ in keychain }
    }

    /// `openWithPassword`, and `body` given the keychain and the password it opened with
    /// (`kc keyslot remove`, which re-keys under the same password).
    static func withPassword<R>(_ options: KeychainChoice, _ body: (Keychain, borrowing SecureBytes) throws -> R) throws -> R {
        let address = try options.address()
        switch address {
        case .team:
            throw KeychainError(
                errSecParam, "\(address) is a team keychain: it has no keychain password or settings of its own here",
                hint: "team keychains are managed with `kc team` (kc team --help)")
        case .file(let path):
            try checkExists(address)
            try Keychain.checkFile(at: address.agentPath)   // "not a kc keychain" before any "locked"
            let password = try PasswordSource.current(options, path: path)
            let opened = try Keychain.open(at: address.agentPath, password: password)
            // The password the file has accepts it, as an agent's unlock does.
            rememberGeneration(opened, accepting: true)
            return try body(opened, password)
        }
    }

    /// Opens a keychain file in this process with its recovery key (`kc passwd --recovery`:
    /// the password is lost) and gives `body` the keychain and the key. - Throws: errSecParam for a team keychain.
    static func withRecoveryKey<R>(_ options: KeychainChoice, _ body: (Keychain, borrowing SecureBytes) throws -> R) throws -> R {
        let address = try options.address()
        guard case .file = address else {
            throw KeychainError(errSecParam, "\(address) is a team keychain: it has no recovery key", hint: "team keychains are managed with `kc team`")
        }
        try checkExists(address)
        try Keychain.checkFile(at: address.agentPath)
        let key = try RecoveryKeySource.read(options, path: address.agentPath)
        let opened = try Keychain.open(at: address.agentPath, slot: .recovery, secret: key)
        // As the agent refuses it: an older copy put in place must not be re-keyed into
        // passing for the live file (found attacking the generations seen).
        try SeenGenerations.refuseOlder(
            try opened.keychainID(), at: address.agentPath, opened.generation,
            hint:
                "if you restored it yourself, open it once with its password, which accepts it; if that is lost too, remove the keychain's line from \(SeenGenerations.file)"
        )
        return try body(opened, key)
    }

    /// Records the generation `keychain` reached in this process (a re-key, a slot added or
    /// removed) in the record of generations seen, as the agent records what it writes: a
    /// copy from before does not then open through a key slot. A record that cannot be
    /// written is left as it is.
    static func rememberGeneration(_ keychain: Keychain, accepting: Bool = false) {
        guard let id = try? keychain.keychainID() else { return }
        do {
            try SeenGenerations.record(id, at: keychain.path, keychain.generation, accepting: accepting)
        } catch let error as KeychainError {
            Report.note("warning: the generation of \(keychain.path) was not recorded (\(error.message)): a copy from before may still open through a key slot")
        } catch {}
    }

    /// A clear message for a missing keychain before any password is asked for. A team
    /// keychain (`team:NAME`) exists when this device has its team file or the team agent
    /// holds it (a CI runner has no team file). - Throws: errSecNoSuchKeychain.
    static func checkExists(_ address: KeychainAddress) throws {
        switch address {
        case .team(let name):
            if KeychainSession.exists(KeychainLocation.teamFile(name)) { return }
            if try teamAgent().status()?.contains(where: { $0.path == address.agentPath }) == true { return }
            throw KeychainSession.teamUnavailable(name)
        case .file(let path):
            try KeychainSession.requireExisting(path, hint: missingHint(path))
        }
    }

    /// The client of the team agent (`kc-team agent`), compared with the kc-team installed
    /// beside this kc before anything secret goes to it.
    static func teamAgent() -> AgentClient {
        var client = AgentClient()
        client.isKC = true
        return client.teamAgent
    }

    /// Every agent kc has: the file agent and the team agent (`kc lock --all`, `kc agent --stop`).
    static func allAgents() -> [AgentClient] { [AgentClient(), teamAgent()] }
}
