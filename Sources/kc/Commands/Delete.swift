import ArgumentParser
import KeychainCore

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
            --yes (exit 206 otherwise). --all reports how many items went. Exit 44
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
        var deleted = 0
        for query in queries { deleted += try keychain.delete(query) }
        if all { Report.note("deleted \(deleted) item\(deleted == 1 ? "" : "s")") }
    }
}
