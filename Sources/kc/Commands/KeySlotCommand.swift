import ArgumentParser
import KeychainClient
import KeychainCore
import KeychainFormats
#if canImport(Glibc)
import Glibc
#endif

/// `kc keyslot`: the ways into a keychain beside its password (`docs/design.md`, "Key
/// slots"): add a recovery key, list the slots, remove one.
struct KeySlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyslot",
        abstract: "Add, list or remove a keychain's key slots (a recovery key, the TPM, beside the password).",
        discussion: """
            Each slot is one more way to the keychain's master key. Slot 1 is the
            password slot (kc passwd changes it); it is never removed.

            Examples:
              kc keyslot add --recovery   # prints a new recovery key once
              kc keyslot add --tpm2       # sealed to this machine's TPM
              kc keyslot add --tpm2 --pin --pcrs 7
              kc keyslot list             # id, kind, created: no secret
              kc keyslot list --json
              kc keyslot remove 2
              kc unlock --recovery        # opens with the recovery key

            A TPM2 slot seals the keychain's key to this machine's TPM (kc-tpm,
            beside kc, talks to it): `kc unlock` then opens the keychain with no
            password on this machine (--pin: with the PIN, whose wrong tries the
            TPM counts; --pcrs: only while those PCRs keep today's values), and
            `kc unlock --tpm2-only` never prompts. A copy of the file on another
            machine, or after the TPM is cleared, gets nothing from it. The TPM is
            KC_TPM_TCTI when set (e.g. swtpm:host=127.0.0.1,port=2321), else
            /dev/tpmrm0 (docs/tpm.md). The slot is tried once before it is added.

            Every subcommand opens the keychain with its password. The recovery key
            goes to stdout, once, and is kept nowhere: write it down and keep it
            apart from the password; if it cannot be written (a full disk, a closed
            pipe), no slot is added (exit 220).

            remove replaces the master key, as `kc passwd` does (under the same
            password, asked anyway), so the removed slot opens nothing written
            since, even with a copy of the file made before. Each TPM2 slot without
            a PIN that the TPM unseals again is kept, sealed anew; the other slots
            cannot be without their secrets (a recovery key, a PIN): they are
            removed too, each named on stderr. Such a copy still opens with the
            slot, but gives only what it held (docs/security.md).
            `kc passwd` (which replaces the master key) keeps and removes slots the
            same way and says which; `kc passwd --keep-master-key` keeps them all.
            """
    )

    @Argument(help: ArgumentHelp("add, list or remove.", valueName: "action"))
    var action: String

    @Argument(help: ArgumentHelp("With remove: the slot's number (kc keyslot list).", valueName: "slot"))
    var slot: Int64?

    @OptionGroup var keychain: KeychainOptions

    @Flag(name: Options.keyslotRecovery.names, help: Options.keyslotRecovery.help)
    var recovery = false

    @Flag(name: Options.keyslotTPM2.names, help: Options.keyslotTPM2.help)
    var tpm2 = false

    @Flag(name: Options.keyslotPIN.names, help: Options.keyslotPIN.help)
    var pin = false

    @Option(name: Options.keyslotPCRs.names, parsing: .unconditional, help: Options.keyslotPCRs.help, completion: Options.keyslotPCRs.completion)
    var pcrs: String?

    @Option(name: Options.pinFile.names, parsing: .unconditional, help: Options.pinFile.help, completion: Options.pinFile.completion)
    var pinFile: String?

    @Flag(name: Options.keyslotJSON.names, help: Options.keyslotJSON.help)
    var json = false

    func validate() throws {
        let tpmOptions = pin || pcrs != nil || pinFile != nil
        if tpmOptions && !tpm2 { throw ValidationError("--pin, --pcrs and --pin-file go with kc keyslot add --tpm2") }
        if let pcrs {
            do { _ = try PCRList.mask(pcrs) } catch { throw ValidationError(error.message) }
        }
        if pinFile?.isEmpty == true { throw ValidationError("--pin-file is empty: give the PIN's file") }
        switch action {
        case "add":
            guard recovery != tpm2 else { throw ValidationError("kc keyslot add needs one kind of slot: --recovery or --tpm2") }
            guard slot == nil, !json else { throw ValidationError("kc keyslot add takes the kind of slot and its options, no slot number") }
        case "list":
            guard slot == nil, !recovery, !tpm2 else { throw ValidationError("kc keyslot list takes no slot and no kind") }
        case "remove":
            guard slot != nil else { throw ValidationError("kc keyslot remove needs the slot's number (kc keyslot list)") }
            guard !recovery, !tpm2, !json else { throw ValidationError("kc keyslot remove takes the slot's number only") }
        default:
            throw ValidationError("unknown action '\(action)': add, list or remove")
        }
    }

    func run() throws {
        if action == "remove", let slot {
            try Session.withPassword(keychain.choice) { opened, password in
                let agent = Passwd.releaseAgent(opened.path)
                let keeper = TPM2SlotKeeper()
                let removed = try opened.removeKeySlot(slot, password: password, keeping: keeper.keep)
                Passwd.rekeyed(opened.path, agent: agent, removed: removed, except: slot, keeper: keeper)
                Session.rememberGeneration(opened)
                Report.note(
                    "removed key slot \(slot) of \(opened.path) and replaced its master key: a copy of the file made before still opens with the slot, but gives only what that copy held"
                )
            }
            return
        }
        let opened = try Session.openWithPassword(keychain.choice)
        switch action {
        case "add" where tpm2:
            try addTPM2(opened)
            Session.rememberGeneration(opened)
        case "add":
            let id = try opened.addRecoverySlot { key in
                let text = try RecoveryKeyText.format(key)
                // The key is shown before the slot is written: one that could not be shown
                // (a full disk, a closed pipe) is never a way in.
                var shown = text.withUnsafeBytes { Report.writeAll(1, $0) } && Report.writeAll(1, [0x0A])
                if shown, Self.stdoutIsRegularFile { shown = fsync(1) == 0 }
                guard shown else {
                    throw KeychainError(errSecIO, "cannot write the recovery key to stdout: no slot was added to \(opened.path)")
                }
            }
            Session.rememberGeneration(opened)
            Report.note("the recovery key of \(opened.path) (slot \(id)) is shown once, above: write it down and keep it apart from the password")
        default:
            let slots = try opened.keySlots()
            if json {
                Report.out(JSON.array(slots.map(Self.json)) + "\n")
            } else {
                for s in slots {
                    let tpm2 = s.tpm2.map { "\tpin: \($0.hasPIN ? "yes" : "no"), pcrs: \(Self.pcrs($0))" } ?? ""
                    Report.out("\(s.id)\t\(s.kind)\t\(s.created.map { ISO8601.string(secondsSince1970: $0) } ?? "-")\(tpm2)\n")
                }
            }
        }
    }

    /// `add --tpm2`: the PIN (when asked for), then kc-tpm seals a fresh secret, kc-tpm
    /// unseals it again (a slot that cannot open now is never written), and the slot is
    /// written.
    private func addTPM2(_ opened: Keychain) throws {
        let thePIN = pin || pinFile != nil ? try TPMPINSource.forNewSlot(file: pinFile, path: opened.path) : nil
        let id = try opened.addTPM2Slot { secret in
            let blob = try TPMProgram.seal(secret, pin: thePIN, pcrs: pcrs)
            let sealing = try TPM2Sealing(blob: blob)
            guard sealing.hasPIN == (thePIN != nil), sealing.pcrMask == (try pcrs.map(PCRList.mask) ?? 0) else {
                throw KeychainError(errSecInternalError, "kc-tpm sealed the key otherwise than asked: no slot was added")
            }
            let back = try TPMProgram.unseal(blob, pin: thePIN)
            guard back.constantTimeEquals(secret) else {
                throw KeychainError(errSecInternalError, "the TPM gave back another key than it sealed: no slot was added to \(opened.path)")
            }
            return sealing
        }
        let how = [thePIN != nil ? "with a PIN" : nil, pcrs.map { "bound to PCRs \($0)" }].compactMap { $0 }.joined(separator: ", ")
        Report.note(
            "added TPM2 slot \(id) to \(opened.path)\(how.isEmpty ? "" : " (" + how + ")"): `kc unlock` opens it on this machine without the password"
        )
    }

    /// Whether stdout is a regular file (the key is then synced to disk before the slot is
    /// written).
    static var stdoutIsRegularFile: Bool {
        var st = stat()
        return fstat(1, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// A TPM2 slot's PCRs as kc-tpm's `--pcrs` takes them (`0,7`), or `none`.
    static func pcrs(_ sealing: TPM2Sealing) -> String {
        sealing.pcrs.isEmpty ? "none" : sealing.pcrs.map(String.init).joined(separator: ",")
    }

    /// `{"id", "kind", "created"}`: created is null for the password slot; a TPM2 slot adds
    /// `"pin"` (a boolean) and `"pcrs"` (an array of numbers).
    static func json(_ s: KeySlotInfo) -> String {
        var fields = [
            ("id", String(s.id)), ("kind", JSON.string(s.kind)),
            ("created", s.created.map { JSON.string(ISO8601.string(secondsSince1970: $0)) } ?? "null")
        ]
        if let t = s.tpm2 {
            fields += [("pin", t.hasPIN ? "true" : "false"), ("pcrs", "[" + t.pcrs.map(String.init).joined(separator: ",") + "]")]
        }
        return JSON.object(fields)
    }
}
