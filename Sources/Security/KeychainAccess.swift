#if os(Linux)
import Foundation
import KeychainCore
import KeychainClient

/// How the Security API reaches its keychain, call by call, through a `KeychainSession`:
/// 1. a keychain opened by `KeychainConfiguration.use(keychain:password:)`;
/// 2. else the chosen keychain (configured, `$KC_KEYCHAIN`, or the default) through the agent
///    when it holds it unlocked: one socket round trip, no password in this process;
/// 3. else opened in this process with `$KC_PASSWORD` (one key derivation, then kept);
/// 4. else errSecInteractionNotAllowed, as Apple's calls return for a locked keychain.
final class KeychainAccess: @unchecked Sendable {
    static let shared = KeychainAccess()

    // Guards the choice and the sessions; each session guards its own keychain (Apple's
    // API may be called from any thread).
    private let lock = NSLock()
    /// The keychain `use(path:)` chose, parsed then; nil: `$KC_KEYCHAIN` or the default.
    private var configured: Result<KeychainAddress, any Error>?
    private var pinned: KeychainSession?
    private var sessions: [String: KeychainSession] = [:]

    /// Uses the keychain at `path`, opened now with `password`.
    /// - Throws: errSecParam for a team keychain, which is reached only through the team
    ///   agent, never opened with a password here.
    func use(path: String, password: String) throws {
        let address = try KeychainAddress(path)
        switch address {
        case .team:
            throw KeychainError(
                errSecParam, "\(address) is a team keychain: it is reached only through the team agent, never opened with a password here",
                hint: "call KeychainConfiguration.use(keychain:) without a password, and unlock it with `kc unlock -k \(address)`")
        case .file(let file):
            try KeychainSession.requireExisting(KeychainLocation.realPath(file), hint: Self.missingHint)
        }
        let real = address.agentPath
        let secret = try SecureBytes(copying: Array(password.utf8))
        let session = KeychainSession(opened: try Keychain.open(at: real, password: secret))
        session.presence = Self.askOnTerminal
        lock.withLock {
            configured = .success(address)
            pinned = session
        }
    }

    /// Uses the keychain at `path` (nil: `$KC_KEYCHAIN` or the default) the usual way.
    func use(path: String?) {
        lock.withLock {
            configured = path.map { path in Result { try KeychainAddress(path) } }
            pinned = nil
        }
    }

    /// Performs one request and returns its reply.
    func perform(_ request: KeychainRequest) throws -> KeychainReply {
        try session().perform(request)
    }

    /// The session for the chosen keychain, made on first use.
    private func session() throws -> KeychainSession {
        let (configured, pinned) = lock.withLock { (self.configured, self.pinned) }
        if let pinned { return pinned }
        let address = try configured?.get() ?? KeychainAddress.chosen
        let path = address.agentPath
        if let known = lock.withLock({ sessions[path] }) { return known }
        var agent = AgentClient()
        // An unsafe agent folder (another account's /tmp/kc-UID) is skipped when the
        // password is at hand; otherwise its error says what to do.
        if getenv("KC_PASSWORD") != nil { agent.unsafeFolder = .ignore { _ in } }
        // By its agent path: a missing file is named by its real path.
        let session = try KeychainSession(path: path, agent: agent, missingHint: Self.missingHint) { path in
            guard let raw = getenv("KC_PASSWORD") else {
                throw KeychainError(
                    errSecInteractionNotAllowed, "the keychain \(path) is locked",
                    hint: "run `kc unlock`, set KC_PASSWORD, or call KeychainConfiguration.use(keychain:password:)")
            }
            return try SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: strlen(raw)))
        }
        session.presence = Self.askOnTerminal
        return lock.withLock {
            if let raced = sessions[path] { return raced }
            sessions[path] = session
            return session
        }
    }

    private static let missingHint = "create it with `kc create`"

    /// kSecUseAuthenticationUIAllow for an item that requires user presence: the keychain
    /// password typed now on the program's controlling terminal, echo off, with
    /// kSecUseOperationPrompt as the prompt's text (Apple shows its system dialog). A
    /// password the program gave (`KeychainConfiguration`, `KC_PASSWORD`) proves nothing
    /// about a person and is not used. - Throws: errSecInteractionNotAllowed when the
    /// program has no terminal to ask on.
    private static func askOnTerminal(_ prompt: PresencePrompt) throws -> SecureBytes {
        guard TerminalPrompt.isAvailable else {
            throw UserPresenceRequired(item: prompt.item).error(why: "this program has no terminal to ask on")
        }
        return try TerminalPrompt.readSecret(prompt: prompt.text)
    }
}
#endif
