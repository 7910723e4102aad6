import KeychainCore
import KeychainClient

/// Proofs of user presence for kc's commands (`docs/security.md`, "User presence"): the
/// keychain's password typed on the terminal for this command. A password from a script
/// (`KC_PASSWORD`, `--password-stdin`, `--password-file`) proves nothing about a person and
/// is never used; without a terminal the read fails with errSecInteractionNotAllowed.
enum PresenceSource {
    /// The keychain password this command typed at its own prompt to open the keychain
    /// here: it already is a proof, so the user is not asked twice in one command.
    nonisolated(unsafe) static var typed: SecureBytes?
    /// The keychain `typed` was typed for: it proves presence for that keychain only (a
    /// password typed to open one keychain is no answer to a prompt that names another's item).
    nonisolated(unsafe) static var typedFor: String?
    /// `--prompt TEXT` of `kc read` (`kc find` puts its own into the query).
    nonisolated(unsafe) static var reason: String?

    /// Keeps a copy of a password just typed at the terminal for the keychain `path` (see
    /// `typed`).
    static func remember(_ password: borrowing SecureBytes, for path: String) {
        typed = try? password.copy(prefix: password.count)
        typedFor = path
    }

    /// Asks on the terminal, once per request (`KeychainSession.presence`).
    /// - Throws: errSecInteractionNotAllowed when there is no terminal to ask on;
    ///   errSecUserCanceled on end of input.
    static func ask(_ prompt: PresencePrompt) throws -> SecureBytes {
        if typedFor == prompt.path, let password = typed.take() { return password }
        guard Terminal.isAvailable else {
            throw UserPresenceRequired(item: prompt.item).error(why: "there is no terminal to ask on")
        }
        let shown = prompt.reason == nil && reason != nil ? prompt.with(reason: reason) : prompt
        return try Terminal.readSecret(prompt: shown.text)
    }
}
