import ArgumentParser
import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc update`: a new secret and/or new attributes for the matching item.
struct Update: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give the matching item a new secret or new attributes.",
        discussion: """
        Examples:
          kc update -s github.com -a alice           # the new secret: asked twice
          printf %s "$NEW" | kc update -s ci -a bot  # the new secret from stdin
          kc update -s shared --all -w "$NEW"        # every matching item
          kc update -s github.com -a alice --new-label Work   # no secret is read

        Refuses to change more than one item unless --all is given, and says how
        many matched.
        """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var secret: SecretOptions

    @Flag(help: "Change every matching item (otherwise more than one match is refused).")
    var all = false

    @Option(parsing: .unconditional, help: "New label.") var newLabel: String?
    @Option(parsing: .unconditional, help: "New kind.") var newKind: String?
    @Option(parsing: .unconditional, help: "New comment.") var newComment: String?
    @Option(parsing: .unconditional, help: "New account name.") var newAccount: String?
    @Option(parsing: .unconditional, help: "New service (the server, for internet passwords).") var newService: String?

    func validate() throws {
        if attributeChanges.isEmpty { try secret.checkStdinIsNotShared(passwordStdin: keychain.passwordStdin) }
    }

    var attributeChanges: [String: Any] {
        var c: [String: Any] = [:]
        c[kSecAttrLabel] = newLabel
        c[kSecAttrDescription] = newKind
        c[kSecAttrComment] = newComment
        c[kSecAttrAccount] = newAccount
        if let newService { c[item.itemClass == .internet ? kSecAttrServer : kSecAttrService] = newService }
        return c
    }

    func run() throws {
        secret.scrubArgv()
        try item.checkFitsClass()
        let keychain = try Session.open(self.keychain.choice)
        try keychain.prepare()
        let query = item.query
        try Guard.matches(keychain, query: query, item: item, all: all, verb: "update")
        var changes = attributeChanges
        // A new secret is read unless only attributes change.
        if secret.isGiven || changes.isEmpty {
            let value = try secret.read(confirm: true, stdinTaken: self.keychain.passwordStdin)
            changes[kSecValueData] = value.withUnsafeBytes { Data($0) }
        }
        try keychain.update(query, changes)
    }
}
