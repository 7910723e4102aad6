import ArgumentParser
import KeychainCore

/// `kc passwd`: a new keychain password, or a new master key.
struct Passwd: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the keychain's password (with --rekey, also its master key).",
        discussion: """
        The current password comes from the usual sources; the new one from a
        prompt (twice), --new-password-file or $KC_NEW_PASSWORD.

        Examples:
          kc passwd
          KC_PASSWORD=old KC_NEW_PASSWORD=new kc passwd -k ./ci.keychain-db
          kc passwd --rekey   # after a suspected leak: a new master key too

        Old copies of the file still open with the old password; --rekey keeps
        later items out of them.
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Read the new password from a file (one trailing newline is dropped).", valueName: "path"))
    var newPasswordFile: String?

    @Option(parsing: .unconditional, help: "A new key-derivation profile (default: keep the current one).")
    var kdf: KDFProfile?

    @Flag(help: "Also replace the master key and re-seal every item.")
    var rekey = false

    func run() throws {
        let opened = try Session.openWithPassword(keychain.choice)
        let newPassword = try PasswordSource.replacement(file: newPasswordFile, path: opened.path)
        if rekey {
            try opened.rekey(newPassword: newPassword, profile: kdf)
        } else {
            try opened.changePassword(to: newPassword, profile: kdf)
        }
        Report.note(rekey ? "changed the password and master key of \(opened.path)" : "changed the password of \(opened.path)")
    }
}
