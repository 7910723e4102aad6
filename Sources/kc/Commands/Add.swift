import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc add`: stores a new item.
struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an item; the secret comes from a prompt, stdin, --data-file or -w.",
        discussion: """
        Examples:
          kc add -s github.com -a alice               # asks for the secret twice
          printf %s "$TOKEN" | kc add -s ci -a bot    # from stdin, exact bytes
          kc add -s db -a app --data-file secret.bin  # from a file, binary too
          kc add --class internet -s example.com -a bob -r https -P 443
          kc add -U -s github.com -a alice            # replaces an existing secret
          kc add -s bank -a me --user-presence        # password on every read

        The secret is stored with its exact bytes; on a terminal, kc warns when
        one from stdin or a file ends in a newline. An empty secret is refused
        (exit 206) unless --allow-empty is given. The first add with no keychain
        creates the default one (asking for its new password). Exit 45 when the
        item exists (without -U). With --user-presence, every read of the secret
        asks for the keychain password on the terminal, even while the keychain
        is unlocked; without a terminal the read fails (exit 36).
        """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var secret: SecretOptions

    @Flag(name: .customShort("U"), help: "Update the item if it already exists.")
    var updateIfExists = false

    @Option(parsing: .unconditional, help: "The key-derivation profile if this add creates the default keychain.")
    var kdf: KDFProfile = .moderate

    @Flag(help: "Ask for the keychain password on every read of the secret (access control: user presence).")
    var userPresence = false

    func validate() throws {
        try secret.checkStdinIsNotShared(passwordStdin: keychain.passwordStdin)
        if (item.itemClass == .certificate || item.itemClass == .key) && secret.dataFile == nil {
            throw ValidationError("a \(item.itemClass.rawValue) is added from a file: --data-file PATH")
        }
    }

    func run() throws {
        secret.scrubArgv()
        try item.checkFitsClass()
        try secret.checkArgument()
        if item.itemClass == .generic || item.itemClass == .internet {
            if (item.service ?? "").isEmpty && (item.account ?? "").isEmpty {
                throw KeychainError(errSecParam, "an item needs a service (-s) or an account (-a)",
                                    hint: "for example: kc add -s github.com -a alice")
            }
        }
        let keychain = try Session.openOrCreateDefault(self.keychain.choice, profile: kdf)
        try keychain.prepare()   // the keychain password is asked for before the secret
        let value = try secret.read(confirm: true, stdinTaken: self.keychain.passwordStdin)
        let data = value.withUnsafeBytes { Data($0) }
        var query = item.query
        if item.itemClass == .internet && query[kSecAttrAuthenticationType] == nil {
            query[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault
        }
        query[kSecValueData] = data
        if userPresence { query[kcAttrAccessControlFlags] = Int(AccessControlFlags.userPresence) }
        do {
            _ = try keychain.add(query)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            guard updateIfExists else {
                throw KeychainError(errSecDuplicateItem, "an item matching \(item.summary) already exists in \(keychain.path)",
                                    hint: "replace its secret with `kc add -U ...` or `kc update ...`")
            }
            try replaceExisting(keychain, data: data)
        }
        secret.noteTrailingNewline(data.last == 0x0A, stdinTaken: self.keychain.passwordStdin)
    }

    /// -U: the item exists; give it the new secret and the attributes given.
    private func replaceExisting(_ keychain: KeychainSession, data: Data) throws {
        let identifying: Set<String> = [kSecAttrAccount, kSecAttrService, kSecAttrServer, kSecAttrSecurityDomain, kSecAttrPath,
                                        kSecAttrPort, kSecAttrProtocol, kSecAttrAuthenticationType, kSecAttrApplicationTag]
        var query: [String: Any] = [kSecClass: item.itemClass.secClass]
        var changes: [String: Any] = [kSecValueData: data]
        for (key, value) in item.attributes {
            if identifying.contains(key) { query[key] = value } else { changes[key] = value }
        }
        if item.itemClass == .internet && query[kSecAttrAuthenticationType] == nil {
            query[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault
        }
        let matches = try keychain.count(query.merging([kSecMatchLimit: kSecMatchLimitAll]) { a, _ in a })
        guard matches == 1 else {
            throw KeychainError(errSecDuplicateItem, "\(matches) items match \(item.summary); -U replaces exactly one",
                                hint: "narrow the query, or use `kc update --all`")
        }
        try keychain.update(query, changes)
    }
}
