import ArgumentParser
import KeychainCore
import KeychainClient

/// `kc passwd`: a new keychain password and, by default, a new master key
/// (`docs/security.md`, "What an old password still opens").
struct Passwd: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the keychain's password and its master key.",
        discussion: """
            The current password comes from the usual sources; the new one from a
            prompt (twice), --new-password-file or $KC_NEW_PASSWORD.

            Examples:
              kc passwd
              KC_PASSWORD=old KC_NEW_PASSWORD=new kc passwd -k ./ci.keychain-db
              kc passwd --keep-master-key   # only the password (fast at any size)

            The master key is replaced and every item re-sealed (about 9 s of CPU at
            100,000 items): a copy of the file made before still opens with the old
            password, but gives only what that copy held. With --keep-master-key
            (instant at any size) such a copy gives the master key, and with it
            every item added later.

            Key slots (kc keyslot): --keep-master-key changes the password slot
            only, and a recovery key still opens the keychain. A new master key
            cannot be wrapped for a recovery key kc does not have: such slots are
            removed, each named on stderr; add a new one with
            `kc keyslot add --recovery`.

            The password is lost: --recovery opens the keychain with its recovery
            key instead (a prompt, or --password-stdin / --password-file) and
            sets the new password. Without --keep-master-key the recovery slot is
            removed too, as above: add a new one.
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(name: Options.newPasswordFile.names, parsing: .unconditional, help: Options.newPasswordFile.help, completion: Options.newPasswordFile.completion)
    var newPasswordFile: String?

    @Option(name: Options.passwdKDF.names, parsing: .unconditional, help: Options.passwdKDF.help, completion: Options.passwdKDF.completion)
    var kdf: KDFProfile?

    @Flag(name: Options.rekey.names, help: Options.rekey.help)
    var rekey = false

    @Flag(name: Options.keepMasterKey.names, help: Options.keepMasterKey.help)
    var keepMasterKey = false

    @Flag(name: Options.passwdRecovery.names, help: Options.passwdRecovery.help)
    var recovery = false

    func validate() throws {
        if rekey && keepMasterKey {
            throw ValidationError("--rekey replaces the master key and --keep-master-key keeps it; use one of them")
        }
    }

    func run() throws {
        let opened = try recovery ? Session.openWithRecoveryKey(keychain.choice) : Session.openWithPassword(keychain.choice)
        let newPassword = try PasswordSource.replacement(file: newPasswordFile, path: opened.path)
        if keepMasterKey {
            try opened.changePassword(to: newPassword, profile: kdf)
        } else {
            // An agent that holds this keychain holds the old master key, and anyone with a
            // copy from before and the old password holds it too: they could put a file
            // under that key in place, at a higher generation, and the agent, which never
            // saw the new one, would serve it and seal new secrets under the old key. So the
            // agent lets go of the old key first, and after the re-key reads the file once,
            // which makes it forget what it kept for after-first-unlock items
            // (docs/security.md, "What an old password still opens").
            let agent = AgentClient()
            _ = try? agent.lock(path: opened.path)
            let removed = try opened.rekey(newPassword: newPassword, profile: kdf)
            for slot in removed {
                Report.note(
                    "removed key slot \(slot.id) (\(slot.kind)) of \(opened.path): the new master key cannot be wrapped for it without its \(slot.kind == "recovery" ? "recovery key" : "secret"); add a new one with `kc keyslot add --\(slot.kind)`"
                )
            }
            _ = try? agent.perform(path: opened.path, .count([kSecClass: kSecClassGenericPassword]))
        }
        Report.note(keepMasterKey ? "changed the password of \(opened.path) (the master key is kept)" : "changed the password and master key of \(opened.path)")
    }
}
