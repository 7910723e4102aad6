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
        Refuses to delete more than one item unless --all is given, and says how many matched.
        Exit 44 when nothing matches.
        """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions

    @Flag(help: "Delete every matching item (otherwise more than one match is refused).")
    var all = false

    func run() throws {
        try item.checkFitsClass()
        let keychain = try Session.open(self.keychain.choice)
        let query = item.query
        try Guard.matches(keychain, query: query, item: item, all: all, verb: "delete")
        try keychain.delete(query)
    }
}
