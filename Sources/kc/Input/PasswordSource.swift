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
        if let env = environmentPassword.take() { return try given(env, from: "KC_PASSWORD") }
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
        if let env = environmentPassword.take() { return try given(env, from: "KC_PASSWORD") }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the keychain \(path) is locked and there is no terminal to ask for its password",
                hint: lockedHint ?? "run `kc unlock` first, or set KC_PASSWORD, or pass --password-file PATH or --password-stdin")
        }
        let secret = try Terminal.readSecret(prompt: "Password for keychain \(path): ")
        PresenceSource.remember(secret, for: path)   // typed for this command: a proof of presence too
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
        if let env = environmentSecondPassword.take() { return try given(env, from: "KC_PASSWORD") }
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
        return try askNew(path: path)
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
        return try askNew(path: path)
    }

    /// The shortest new password typed at a prompt that kc takes without a warning.
    static let shortPassword = 8

    /// A new keychain password typed on the terminal, twice. An empty first entry is asked
    /// again at once (three tries), not typed twice to be refused; a short one is taken
    /// with a warning, since anyone who gets the file can guess it offline, at their own
    /// pace. A script's password (KC_PASSWORD, a file, stdin) is not warned about: a
    /// throwaway CI keychain is the script's choice. - Throws: errSecParam when every
    /// entry was empty or the two entries differ; errSecUserCanceled at end of input.
    private static func askNew(path: String) throws -> SecureBytes {
        let empty = "the new password is empty"
        for attempt in 1...3 {
            do {
                return try Terminal.readNewSecret(prompt: "New password for keychain \(path): ", again: "Retype new password: ") { first in
                    guard first.count > 0 else { throw KeychainError(errSecParam, empty, hint: "choose a passphrase of several words") }
                    // UTF-8 characters, counted in place: no copy of the password is made.
                    let characters = first.withUnsafeBytes { bytes in
                        var count = 0
                        for byte in bytes where byte & 0xC0 != 0x80 { count += 1 }
                        return count
                    }
                    if characters < shortPassword {
                        Report.note(
                            "warning: the new password has only \(characters) character\(characters == 1 ? "" : "s"): anyone with the keychain file can try guesses offline, as fast as their machine allows"
                        )
                        Report.note("hint: a passphrase of several words (`kc generate --words 5`) resists that; `kc passwd` changes it later")
                    }
                }
            } catch let error as KeychainError where error.message == empty && attempt < 3 {
                Report.note("the password is empty: type one")
            }
        }
        throw KeychainError(errSecParam, empty, hint: "choose a passphrase of several words")
    }

    private static func explicit(_ options: KeychainChoice) throws -> SecureBytes? {
        if options.passwordStdin {
            return try given(
                Readers.droppingOneNewline(Readers.readAll(0, limit: Terminal.maxLine, what: "the password on stdin")),
                from: "--password-stdin")
        }
        if let file = options.passwordFile {
            return try given(
                Readers.droppingOneNewline(Readers.readFile(file, limit: Terminal.maxLine, what: "password file", warnIfShared: true)),
                from: "the password file \(file)")
        }
        return nil
    }

    /// A password a script gave (`source`: --password-stdin, the password file, KC_PASSWORD).
    /// An empty one is named as such (a variable that was never set, a file written empty),
    /// not tried and reported as a wrong password. - Throws: errSecParam when it is empty.
    private static func given(_ password: consuming SecureBytes, from source: String) throws -> SecureBytes {
        guard password.count > 0 else {
            throw KeychainError(
                errSecParam, "the password from \(source) is empty",
                hint: "check what the script passes (an unset variable, an empty file); no keychain password is empty")
        }
        return password
    }

    private static func nonEmpty(_ password: consuming SecureBytes) throws -> SecureBytes {
        guard password.count > 0 else {
            throw KeychainError(errSecParam, "the new password is empty", hint: "choose a passphrase of several words")
        }
        return password
    }
}
