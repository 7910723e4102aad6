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
          kc update -s backup -a cron --new-accessible after-first-unlock
          kc update -s bank -a me --user-presence    # password on every read

        Refuses to change more than one item unless --all is given, and says how
        many matched. The new secret follows kc add's rules: exact bytes, a
        warning on a terminal when one from stdin or a file ends in a newline,
        and empty only with --allow-empty. --ignore-case, --contains and
        --prefix (kc extensions) find the items by a scan that decrypts the
        class, then change exactly the items found. Changing an item that
        requires user presence (--no-user-presence too) asks for the keychain
        password on the terminal first.
        """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var match: MatchOptions
    @OptionGroup var secret: SecretOptions

    @Flag(help: "Change every matching item (otherwise more than one match is refused).")
    var all = false

    @Option(parsing: .unconditional, help: "New label.") var newLabel: String?
    @Option(parsing: .unconditional, help: "New kind.") var newKind: String?
    @Option(parsing: .unconditional, help: "New comment.") var newComment: String?
    @Option(parsing: .unconditional, help: "New account name.") var newAccount: String?
    @Option(parsing: .unconditional, help: "New service (the server, for internet passwords).") var newService: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("New accessibility class (as kc add --accessible); the item is sealed again under that class's key.", valueName: "class"))
    var newAccessible: Accessibility?

    @Flag(inversion: .prefixedNo, help: "Require (or no longer require) the keychain password on every read of the secret.")
    var userPresence: Bool?

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
        c[kSecAttrAccessible] = newAccessible?.code
        if let userPresence { c[kcAttrAccessControlFlags] = userPresence ? Int(AccessControlFlags.userPresence) : 0 }
        return c
    }

    func run() throws {
        secret.scrubArgv()
        try item.checkFitsClass()
        try ValueLength.check([("--new-label", newLabel), ("--new-kind", newKind), ("--new-comment", newComment),
                               ("--new-account", newAccount), ("--new-service", newService)])
        try secret.checkArgument()
        newAccessible?.warnIfDeprecated()
        let keychain = try Session.open(self.keychain.choice)
        if userPresence == true { try keychain.prepareHere() } else { try keychain.prepare() }   // a protected secret: opened here
        let queries = try Guard.selection(keychain, item: item, matching: match.matching, all: all, verb: "update").queries
        var changes = attributeChanges
        // A new secret is read unless only attributes change.
        var endsInNewline = false
        if secret.isGiven || changes.isEmpty {
            let value = try secret.read(confirm: true, stdinTaken: self.keychain.passwordStdin)
            let data = value.withUnsafeBytes { Data($0) }
            endsInNewline = data.last == 0x0A
            changes[kSecValueData] = data
        }
        for query in queries { try keychain.update(query, changes) }
        secret.noteTrailingNewline(endsInNewline, stdinTaken: self.keychain.passwordStdin)
    }
}
