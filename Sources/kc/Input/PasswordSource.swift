import KeychainCore

/// Keychain passwords: from --password-stdin, --password-file, $KC_PASSWORD, or a prompt
/// on the terminal, in that order. With none of them and no terminal, kc fails at once
/// (errSecInteractionNotAllowed, exit 36): it never waits for input that cannot come.
enum PasswordSource {
    /// $KC_PASSWORD and $KC_NEW_PASSWORD, taken out of the environment at start-up.
    nonisolated(unsafe) static var environmentPassword: SecureBytes?
    nonisolated(unsafe) static var environmentNewPassword: SecureBytes?
    /// A copy of $KC_PASSWORD for a command's second keychain (`kc move`'s destination),
    /// made by `keepForSecondKeychain`.
    nonisolated(unsafe) static var environmentSecondPassword: SecureBytes?

    /// $KC_TEAM_TOKEN (a CI runner's token, `kcr1:…`), taken out of the environment at
    /// start-up like $KC_PASSWORD; only `kc unlock` uses it.
    nonisolated(unsafe) static var environmentTeamToken: SecureBytes?

    /// Reads and wipes the password variables and the runner token (see `Environment.takeSecret`).
    static func captureEnvironment() {
        environmentPassword = try? Environment.takeSecret("KC_PASSWORD")
        environmentNewPassword = try? Environment.takeSecret("KC_NEW_PASSWORD")
        environmentTeamToken = try? Environment.takeSecret("KC_TEAM_TOKEN")
    }

    /// The password of the team keychain `location` (`team:NAME`), for `kc unlock`: the
    /// same sources as a keychain's (--password-stdin, --password-file, $KC_PASSWORD, a
    /// prompt naming it as a team keychain).
    static func team(_ options: KeychainChoice, location: String) throws -> SecureBytes {
        if let explicit = try explicit(options) { return explicit }
        if let env = environmentPassword.take() { return env }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the team keychain \(location) is locked and there is no terminal to ask for its password",
                hint: "set KC_PASSWORD, or pass --password-file PATH or --password-stdin; a CI runner gives its token: --team-token-file FILE or KC_TEAM_TOKEN")
        }
        return try Terminal.readSecret(prompt: "Password for team keychain \(location): ")
    }

    /// The password of an existing keychain. - Parameter lockedHint: what to suggest when
    /// there is no password to be had (a credential helper cannot take --password-stdin:
    /// its stdin is its protocol); by default every source kc has.
    static func current(_ options: KeychainChoice, path: String, lockedHint: String? = nil) throws -> SecureBytes {
        var typed = false
        return try current(options, path: path, lockedHint: lockedHint, typed: &typed)
    }

    /// As `current`; `typed` tells whether the password was typed at kc's prompt (which
    /// may be asked again, and may unlock the keychain in the agent: `UnlockOnPrompt`).
    static func current(_ options: KeychainChoice, path: String, lockedHint: String?, typed: inout Bool) throws -> SecureBytes {
        typed = false
        if let explicit = try explicit(options) { return explicit }
        if let env = environmentPassword.take() { return env }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the keychain \(path) is locked and there is no terminal to ask for its password",
                hint: lockedHint ?? "run `kc unlock` first, or set KC_PASSWORD, or pass --password-file PATH or --password-stdin")
        }
        let secret = try Terminal.readSecret(prompt: "Password for keychain \(path): ")
        PresenceSource.remember(secret)   // typed for this command: a proof of presence too
        typed = true
        return secret
    }

    /// Keeps a copy of $KC_PASSWORD for a second keychain: `kc move` documents that it
    /// applies to both keychains, and the first one to ask takes the original.
    static func keepForSecondKeychain() throws {
        guard let password = environmentPassword.take() else { return }
        environmentSecondPassword = try password.copy(prefix: password.count)
        environmentPassword = consume password
    }

    /// The password of a command's second keychain (`kc move --to`), which the agent does
    /// not hold: $KC_PASSWORD (see `keepForSecondKeychain`), else a prompt naming it. The
    /// first keychain's --password-stdin and --password-file are its own.
    static func second(path: String) throws -> SecureBytes {
        if let env = environmentSecondPassword.take() { return env }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the keychain \(path) is locked and there is no terminal to ask for its password",
                hint: "run `kc unlock -k \(path)` first, or set KC_PASSWORD (kc move uses it for both keychains)")
        }
        return try Terminal.readSecret(prompt: "Password for keychain \(path): ")
    }

    /// The password for a keychain being created: the same sources, a prompt asks twice.
    static func forNewKeychain(_ options: KeychainChoice, path: String) throws -> SecureBytes {
        if let explicit = try explicit(options) { return try nonEmpty(explicit) }
        if let env = environmentPassword.take() { return try nonEmpty(env) }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed,
                "creating the keychain \(path) needs a new password and there is no terminal to ask on",
                hint: "set KC_PASSWORD, or pass --password-file PATH or --password-stdin")
        }
        return try nonEmpty(Terminal.readNewSecret(prompt: "New password for keychain \(path): ", again: "Retype new password: "))
    }

    /// A new password for `kc passwd`: --new-password-file, $KC_NEW_PASSWORD, or a prompt (twice).
    static func replacement(file: String?, path: String) throws -> SecureBytes {
        if let file {
            return try nonEmpty(Readers.droppingOneNewline(Readers.readFile(file, limit: Terminal.maxLine, what: "new password file", warnIfShared: true)))
        }
        if let env = environmentNewPassword.take() { return try nonEmpty(env) }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed, "no new password given and there is no terminal to ask on",
                hint: "set KC_NEW_PASSWORD or pass --new-password-file PATH")
        }
        return try nonEmpty(Terminal.readNewSecret(prompt: "New password for keychain \(path): ", again: "Retype new password: "))
    }

    private static func explicit(_ options: KeychainChoice) throws -> SecureBytes? {
        if options.passwordStdin {
            return try Readers.droppingOneNewline(Readers.readAll(0, limit: Terminal.maxLine, what: "the password on stdin"))
        }
        if let file = options.passwordFile {
            return try Readers.droppingOneNewline(Readers.readFile(file, limit: Terminal.maxLine, what: "password file", warnIfShared: true))
        }
        return nil
    }

    private static func nonEmpty(_ password: consuming SecureBytes) throws -> SecureBytes {
        guard password.count > 0 else {
            throw KeychainError(errSecParam, "the new password is empty", hint: "choose a passphrase of several words")
        }
        return password
    }
}
