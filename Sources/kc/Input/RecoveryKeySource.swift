import KeychainCore

/// Where a recovery key comes from (`kc unlock --recovery`, `kc passwd --recovery`): stdin
/// with --password-stdin, a file with --password-file, else a prompt with echo off. Never
/// `KC_PASSWORD`, which is the password. Read with or without dashes, in either case
/// (`RecoveryKeyText.parse`).
enum RecoveryKeySource {
    /// The recovery key's 32 bytes for the keychain at `path`.
    /// - Throws: errSecParam for text that is not a recovery key; errSecInteractionNotAllowed
    ///   when there is no terminal to ask and no other source.
    static func read(_ choice: KeychainChoice, path: String) throws -> SecureBytes {
        let typed: SecureBytes
        if choice.passwordStdin {
            typed = try Readers.readAll(0, limit: Terminal.maxLine, what: "the recovery key on stdin")
        } else if let file = choice.passwordFile {
            typed = try Readers.readFile(file, limit: Terminal.maxLine, what: "recovery key file", warnIfShared: true)
        } else {
            guard Terminal.isAvailable else {
                throw KeychainError(
                    errSecInteractionNotAllowed, "there is no terminal to ask for the recovery key of \(path)",
                    hint: "give it with --password-stdin or --password-file")
            }
            typed = try Terminal.readSecret(prompt: "Recovery key for keychain \(path): ")
        }
        return try RecoveryKeyText.parse(typed)
    }
}
