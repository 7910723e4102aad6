import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc move`: an item from one keychain to another in one step, attributes, dates and
/// secret, never in plaintext outside kc and its agent.
struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move the matching item to another keychain (attributes, dates and secret).",
        discussion: """
            Examples:
              kc move -s github.com -a alice --to work    # from the default keychain
              kc move -k work --class internet -s example.com --to login
              kc move -k old -s deploy --contains --all --to ci

            The item is added to the --to keychain first, with every attribute, its
            creation and modification dates and its secret, then deleted from the
            source, so no failure can lose it. If that delete fails, kc says so and
            exits with its status: the item is then in both keychains.

            More than one match is refused unless --all is given. An item with the
            same primary key in the destination is exit 45, and nothing changes.

            Passwords: each keychain through the agent when it holds it; else the
            source's from --password-stdin, --password-file, $KC_PASSWORD or a
            prompt, the destination's from $KC_PASSWORD (for both) or a prompt.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var match: MatchOptions

    @Option(name: Options.to.names, parsing: .unconditional, help: Options.to.help, completion: Options.to.completion)
    var destination: String

    @Flag(name: Options.moveAll.names, help: Options.moveAll.help)
    var all = false

    func validate() throws {
        if destination.isEmpty { throw ValidationError("--to is empty: give the destination keychain's path or name") }
    }

    func run() throws {
        try item.checkFitsClass()
        let matching = match.matching
        let summary = matching.describe(item.summary)
        try PasswordSource.keepForSecondKeychain()
        let source = try Session.open(keychain.choice)
        let target = try Session.openSecond(KeychainChoice(keychain: destination))
        guard source.path != target.path else {
            throw KeychainError(
                errSecParam, "--to names \(target.path), the keychain the item is in; nothing was moved",
                hint: "choose the source with -k and the destination with --to")
        }
        // Both passwords are settled before anything is read or written.
        try source.prepare()
        try target.prepare()
        var query = item.query
        matching.apply(to: &query)
        let references = try Guard.references(source, query: query, summary: summary, all: all, verb: "move")
        var items: [ImportItem] = []
        var modified: [Date?] = []
        for (index, reference) in references.enumerated() {
            let found = try source.copyMatching([kSecValuePersistentRef: reference, kSecReturnAttributes: true, kSecReturnData: true])
            guard let attributes = found as? [String: Any] else {
                throw KeychainError(errSecInternalError, "the item matching \(summary) came back without its attributes; nothing was moved")
            }
            let copy = Self.importItem(attributes, itemClass: item.itemClass, source: "item \(index + 1)")
            items.append(copy)
            modified.append(copy.modified)
        }
        // One item is added or refused atomically; several are tried first, so a duplicate
        // among them changes nothing.
        if items.count > 1 {
            let trial = try target.importItems(items, updateExisting: false, dryRun: true, skipInvalid: false)
            let taken = trial.filter { $0 != .created }.count
            if taken > 0 {
                throw KeychainError(
                    errSecDuplicateItem,
                    "\(taken) of the \(items.count) items matching \(summary) \(taken == 1 ? "is" : "are") already in \(target.path); nothing was moved",
                    hint: "look at them with `kc find -k \(target.path) --all`, and delete or narrow before moving")
            }
        }
        let outcomes = try target.importItems(items, updateExisting: false, dryRun: false, skipInvalid: false)
        items.removeAll()
        if outcomes.count == 1, outcomes[0] != .created {
            throw KeychainError(
                errSecDuplicateItem, "\(target.path) already has an item like the one matching \(summary) (the same primary key); nothing was moved",
                hint: "look at it with `kc find -k \(target.path) …`, and delete or rename one of the two before moving")
        }
        var moved = 0
        for (index, outcome) in outcomes.enumerated() where outcome == .created {
            // The modification date too: an item changed since it was read stays (in both).
            var exact: [String: Any] = [kSecValuePersistentRef: references[index]]
            exact[kSecAttrModificationDate] = modified[index]
            do {
                try source.delete(exact)
                moved += 1
            } catch let error as KeychainError {
                let changed = error.status == errSecItemNotFound ? "it changed or went away in \(source.path) meanwhile" : error.message
                let before = moved > 0 ? "; \(moved) item\(moved == 1 ? " was" : "s were") moved before it" : ""
                throw KeychainError(
                    error.status,
                    "the item matching \(summary) was added to \(target.path), but deleting it from \(source.path) failed (\(changed)): it is now in both keychains and nothing is lost\(before)",
                    hint: "compare the two with `kc find -k … -g`, then delete the copy you do not want with `kc delete -k …`")
            }
        }
        let taken = outcomes.count - outcomes.filter { $0 == .created }.count
        if taken > 0 {
            // Only when another process added the same items between the trial and the move.
            throw KeychainError(
                errSecDuplicateItem,
                "\(taken) of the \(outcomes.count) items matching \(summary) \(taken == 1 ? "was" : "were") added to \(target.path) by another process meanwhile and stay in \(source.path); \(moved) moved",
                hint: "look at them with `kc find -k \(target.path) --all`")
        }
        Report.note("moved \(moved) item\(moved == 1 ? "" : "s") from \(source.path) to \(target.path)")
    }

    /// An item as the source returned it (attributes and `kSecValueData`), as an import into
    /// the destination: every attribute, and its creation and modification dates kept.
    static func importItem(_ attributes: [String: Any], itemClass: CLIClass, source: String) -> ImportItem {
        var query: [String: Any] = [kSecClass: itemClass.secClass]
        for (key, value) in attributes where key != kSecAttrCreationDate && key != kSecAttrModificationDate {
            query[key] = value
        }
        return ImportItem(
            query: query, created: attributes[kSecAttrCreationDate] as? Date,
            modified: attributes[kSecAttrModificationDate] as? Date, source: source)
    }
}
