import ArgumentParser
import KeychainClient
import KeychainCore
import KeychainFormats

/// `kc keyslot`: the ways into a keychain beside its password (`docs/design.md`, "Key
/// slots"): add a recovery key, list the slots, remove one.
struct KeySlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyslot",
        abstract: "Add, list or remove a keychain's key slots (a recovery key beside the password).",
        discussion: """
            Each slot is one more way to the keychain's master key. Slot 1 is the
            password slot (kc passwd changes it); it is never removed.

            Examples:
              kc keyslot add --recovery   # prints a new recovery key once
              kc keyslot list             # id, kind, created: no secret
              kc keyslot list --json
              kc keyslot remove 2
              kc unlock --recovery        # opens with the recovery key

            Every subcommand opens the keychain with its password. The recovery key
            goes to stdout, once, and is kept nowhere: write it down and keep it
            apart from the password. A removed slot no longer opens this file, but
            a copy of the file made before still opens with it (docs/security.md).
            `kc passwd` (which replaces the master key) removes every slot but the
            password's and says so; `kc passwd --keep-master-key` keeps them.
            """
    )

    @Argument(help: ArgumentHelp("add, list or remove.", valueName: "action"))
    var action: String

    @Argument(help: ArgumentHelp("With remove: the slot's number (kc keyslot list).", valueName: "slot"))
    var slot: Int64?

    @OptionGroup var keychain: KeychainOptions

    @Flag(name: Options.keyslotRecovery.names, help: Options.keyslotRecovery.help)
    var recovery = false

    @Flag(name: Options.keyslotJSON.names, help: Options.keyslotJSON.help)
    var json = false

    func validate() throws {
        switch action {
        case "add":
            guard recovery else { throw ValidationError("kc keyslot add needs the kind of slot: --recovery") }
            guard slot == nil, !json else { throw ValidationError("kc keyslot add takes --recovery and nothing else") }
        case "list":
            guard slot == nil, !recovery else { throw ValidationError("kc keyslot list takes no slot and no --recovery") }
        case "remove":
            guard slot != nil else { throw ValidationError("kc keyslot remove needs the slot's number (kc keyslot list)") }
            guard !recovery, !json else { throw ValidationError("kc keyslot remove takes the slot's number only") }
        default:
            throw ValidationError("unknown action '\(action)': add, list or remove")
        }
    }

    func run() throws {
        let opened = try Session.openWithPassword(keychain.choice)
        switch action {
        case "add":
            let added = try opened.addRecoverySlot()
            let text = try RecoveryKeyText.format(added.key)
            Report.note("the recovery key of \(opened.path) (slot \(added.id)) is shown once, here: write it down and keep it apart from the password")
            text.withUnsafeBytes { _ = Report.writeAll(1, $0) }
            Report.out("\n")
        case "remove":
            guard let slot else { return }
            try opened.removeKeySlot(slot)
            Report.note("removed key slot \(slot) of \(opened.path) (a copy of the file made before still opens with it)")
        default:
            let slots = try opened.keySlots()
            if json {
                Report.out(JSON.array(slots.map(Self.json)) + "\n")
            } else {
                for s in slots {
                    Report.out("\(s.id)\t\(s.kind)\t\(s.created.map { ISO8601.string(secondsSince1970: $0) } ?? "-")\n")
                }
            }
        }
    }

    /// `{"id", "kind", "created"}`: created is null for the password slot.
    static func json(_ s: KeySlotInfo) -> String {
        JSON.object([
            ("id", String(s.id)), ("kind", JSON.string(s.kind)),
            ("created", s.created.map { JSON.string(ISO8601.string(secondsSince1970: $0)) } ?? "null")
        ])
    }
}
