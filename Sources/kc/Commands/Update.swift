import ArgumentParser
import KeychainCore
import POSIXSupport
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

    @Flag(name: Options.updateAll.names, help: Options.updateAll.help)
    var all = false

    @Option(name: Options.newLabel.names, parsing: .unconditional, help: Options.newLabel.help, completion: Options.newLabel.completion) var newLabel: String?
    @Option(name: Options.newKind.names, parsing: .unconditional, help: Options.newKind.help, completion: Options.newKind.completion) var newKind: String?
    @Option(name: Options.newComment.names, parsing: .unconditional, help: Options.newComment.help, completion: Options.newComment.completion) var newComment:
        String?
    @Option(name: Options.newAccount.names, parsing: .unconditional, help: Options.newAccount.help, completion: Options.newAccount.completion) var newAccount:
        String?
    @Option(name: Options.newService.names, parsing: .unconditional, help: Options.newService.help, completion: Options.newService.completion) var newService:
        String?
    @Option(name: Options.newAccessible.names, parsing: .unconditional, help: Options.newAccessible.help, completion: Options.newAccessible.completion)
    var newAccessible: Accessibility?

    @Flag(name: Options.updateUserPresence.names, inversion: .prefixedNo, help: Options.updateUserPresence.help)
    var userPresence: Bool?

    /// `--new-service` given as a URL for internet passwords, split as add splits `-s`
    /// (`ServerURL`): the new server, protocol, and the port and path it gives.
    var newServiceURL: ServerURL? {
        get throws {
            guard item.itemClass == .internet, let newService else { return nil }
            return try ServerURL(newService)
        }
    }

    func validate() throws {
        if let user = try newServiceURL?.address.user, let newAccount, newAccount != user {
            throw ValidationError("--new-service gives the account \(ShellWord.quoted(user)), and --new-account another: give one")
        }
        if attributeChanges.isEmpty { try secret.checkStdinIsNotShared(passwordStdin: keychain.passwordStdin) }
    }

    var attributeChanges: [String: Any] {
        var c: [String: Any] = [:]
        c[kSecAttrLabel] = newLabel
        c[kSecAttrDescription] = newKind
        c[kSecAttrComment] = newComment
        c[kSecAttrAccount] = newAccount
        if let newService { c[item.itemClass == .internet ? kSecAttrServer : kSecAttrService] = newService }
        if let newServiceURL = try? newServiceURL { newServiceURL.apply(to: &c) }   // checked by validate()
        c[kSecAttrAccessible] = newAccessible?.code
        if let userPresence { c[kcAttrAccessControlFlags] = userPresence ? Int(AccessControlFlags.userPresence) : 0 }
        return c
    }

    func run() throws {
        secret.scrubArgv()
        try item.checkFitsClass()
        try ValueLength.check([
            (Options.newLabel.displayName, newLabel), (Options.newKind.displayName, newKind),
            (Options.newComment.displayName, newComment), (Options.newAccount.displayName, newAccount),
            (Options.newService.displayName, newService)
        ])
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
        if let newServiceURL = try newServiceURL { Report.note("changed to \(newServiceURL.description)") }
        secret.noteTrailingNewline(endsInNewline, stdinTaken: self.keychain.passwordStdin)
    }
}
