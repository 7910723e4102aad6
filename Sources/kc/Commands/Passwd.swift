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
            only, and every other slot still opens the keychain. A re-key keeps
            each TPM2 slot without a PIN that the TPM unseals again, sealed anew
            for the new master key (kc says so); it cannot keep a recovery key kc
            does not have, nor a PIN slot (a re-key asks no PIN): those slots
            are removed, each named on stderr with the reason; add a new one
            with `kc keyslot add --recovery` or `--tpm2`.

            The password is lost: --recovery opens the keychain with its recovery
            key instead (a prompt, or --password-stdin / --password-file) and
            sets the new password. The master key is replaced and the recovery
            slot that opened it is wrapped for the new one, so the same recovery
            key keeps working; the other slots are kept or removed as above.
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
        if recovery {
            try Session.withRecoveryKey(keychain.choice) { opened, key in
                let newPassword = try PasswordSource.replacement(file: newPasswordFile, path: opened.path)
                if keepMasterKey {
                    try opened.changePassword(to: newPassword, profile: kdf)
                } else {
                    // The recovery key just typed is kept: the slot it opened is wrapped for
                    // the new master key (a lost password must not also cost the recovery key).
                    let agent = Self.releaseAgent(opened.path)
                    let keeper = TPM2SlotKeeper()
                    let removed = try opened.rekey(newPassword: newPassword, profile: kdf, keepingRecoveryKey: key, keeping: keeper.keep)
                    Self.rekeyed(opened.path, agent: agent, removed: removed, keeper: keeper)
                }
                report(opened)
            }
            return
        }
        let opened = try Session.openWithPassword(keychain.choice)
        let newPassword = try PasswordSource.replacement(file: newPasswordFile, path: opened.path)
        if keepMasterKey {
            try opened.changePassword(to: newPassword, profile: kdf)
        } else {
            let agent = Self.releaseAgent(opened.path)
            let keeper = TPM2SlotKeeper()
            let removed = try opened.rekey(newPassword: newPassword, profile: kdf, keeping: keeper.keep)
            Self.rekeyed(opened.path, agent: agent, removed: removed, keeper: keeper)
        }
        report(opened)
    }

    func report(_ keychain: Keychain) {
        Session.rememberGeneration(keychain)
        report(keychain.path)
    }

    func report(_ path: String) {
        Report.note(keepMasterKey ? "changed the password of \(path) (the master key is kept)" : "changed the password and master key of \(path)")
    }

    /// Before a re-key: an agent that holds this keychain holds the old master key, and
    /// anyone with a copy from before and the old password holds it too: they could put a
    /// file under that key in place, at a higher generation, and the agent, which never saw
    /// the new one, would serve it and seal new secrets under the old key. So the agent lets
    /// go of the old key first (docs/security.md, "What an old password still opens").
    static func releaseAgent(_ path: String) -> AgentClient {
        let agent = AgentClient()
        _ = try? agent.lock(path: path)
        return agent
    }

    /// After a re-key: names each TPM2 slot kept and each slot removed (`removed`, beyond
    /// the one the command removed itself when `except` names it), saying why, and has the
    /// agent read the file once, which makes it forget what it kept for after-first-unlock
    /// items.
    static func rekeyed(_ path: String, agent: AgentClient, removed: [KeySlotInfo], except: Int64? = nil, keeper: TPM2SlotKeeper) {
        let gone = Set(removed.map(\.id))
        for id in keeper.resealed where !gone.contains(id) {
            Report.note("kept TPM2 slot \(id) of \(path): the TPM sealed a new key for it, and the new master key is wrapped for that")
        }
        for slot in removed where slot.id != except {
            let why =
                keeper.resealed.contains(slot.id)
                ? "the TPM gave back a key that does not open it"
                : keeper.reasons[slot.id] ?? "the new master key cannot be wrapped for it without its \(slot.kind == "recovery" ? "recovery key" : "secret")"
            Report.note("removed key slot \(slot.id) (\(slot.kind)) of \(path): \(why); add a new one with `kc keyslot add --\(slot.kind)`")
        }
        _ = try? agent.perform(path: path, .count([kSecClass: kSecClassGenericPassword]))
    }
}
