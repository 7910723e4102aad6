import ArgumentParser
import KeychainCore
import KeychainClient

/// `kc delete`: removes the matching item.
struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the matching item.",
        discussion: """
            Examples:
              kc delete -s github.com -a alice
              kc delete --class internet -s example.com --all

            Refuses to delete more than one item unless --all is given, and says how
            many matched. --all with no attribute to narrow it (every item of the
            class) asks on a terminal, showing the count; without a terminal it needs
            --yes (exit 206 otherwise); answering no there exits 128
            (errSecUserCanceled) and deletes nothing. --all reports how many items
            went; on a terminal one deleted item is named on stderr (service,
            account, label: never its secret). Exit 44
            when nothing matches. --ignore-case, --contains and --prefix (kc
            extensions) find the items by a scan that decrypts the class, then
            delete exactly the items found.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var match: MatchOptions

    @Flag(name: Options.deleteAll.names, help: Options.deleteAll.help)
    var all = false

    @Flag(name: Options.yes.names, help: Options.yes.help)
    var yes = false

    func run() throws {
        try item.checkFitsClass()
        let keychain = try Session.open(self.keychain.choice)
        let (count, queries) = try Guard.selection(keychain, item: item, matching: match.matching, all: all, verb: "delete")
        if all && !item.hasConditions && !yes {
            let what = "all \(count) \(item.fields.itemClass.rawValue) item\(count == 1 ? "" : "s") of \(keychain.path)"
            guard Terminal.isAvailable else {
                throw KeychainError(
                    errSecParam, "kc delete --all with no attribute would delete \(what); nothing was deleted",
                    hint: "narrow it with -s, -a or -l, or add --yes to delete them all")
            }
            guard try Terminal.confirm("Delete \(what)? [y/N] ") else {
                throw KeychainError(errSecUserCanceled, "nothing was deleted")
            }
        }
        // A person at a terminal is told what went (its names, never its secret); a script
        // whose stdout is a pipe gets the silence it had.
        let named = !all && Terminal.stdoutIsTerminal ? try described(keychain, queries.first ?? item.query) : nil
        var deleted = 0
        for query in queries { deleted += try keychain.delete(query) }
        if all {
            Report.note("deleted \(deleted) item\(deleted == 1 ? "" : "s")")
        } else if let named {
            Report.note("deleted \(deleted) item\(deleted == 1 ? "" : "s"): \(named)")
        }
    }

    /// The item `query` selects, by the attributes `kc list` shows (service or server,
    /// account, label; a certificate's subject, a key's tag), as `name=value` pairs.
    private func described(_ keychain: KeychainSession, _ query: [String: Any]) throws -> String {
        var search = query
        search[kSecReturnAttributes] = true
        search[kSecMatchLimit] = kSecMatchLimitOne
        let cls = item.fields.itemClass
        guard let attributes = try keychain.copyMatching(search) as? [String: Any] else { return item.summary }
        let cells = List.cells(cls, attributes)
        let nameOfFirst: String
        switch cls {
        case .generic: nameOfFirst = "service"
        case .internet: nameOfFirst = "server"
        case .certificate: nameOfFirst = "subject"
        case .key: nameOfFirst = "tag"
        }
        let pairs = zip([nameOfFirst, "account", "label"], cells[1...3]).filter { !$0.1.isEmpty }.map { "\($0.0)=\($0.1)" }
        let prefix = cls == .generic ? "" : "\(cls.rawValue) "
        return prefix + (pairs.isEmpty ? "(no name)" : pairs.joined(separator: " "))
    }
}
