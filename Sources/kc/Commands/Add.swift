import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc add`: stores a new item.
struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an item; the secret comes from a prompt, stdin, --data-file, -w or --generate.",
        discussion: """
            Examples:
              kc add -s github.com -a alice               # asks for the secret twice
              printf %s "$TOKEN" | kc add -s ci -a bot    # from stdin, exact bytes
              kc add -s db -a app --data-file secret.bin  # from a file, binary too
              kc add --class internet -s example.com -a bob -r https -P 443
              kc add -U -s github.com -a alice            # replaces an existing secret
              kc add -s example.com -a bob --generate     # a new random secret
              kc add -s wifi --generate=words:6 --print   # a passphrase, shown once
              kc add -s backup -a cron --accessible after-first-unlock
              kc add -s github.com -a alice --totp        # a one-time-code seed
              kc add -s bank -a me --user-presence        # password on every read

            --generate[=SPEC] stores a new secret from kc generate's source and
            prints it only with --print. SPEC is kc generate's options, compact,
            separated by commas: a length (32), --charset elements (letters,
            digits, a-f), nosymbols, digitsonly, require:digit+symbol, words or
            words:N, sep:S, and last exclude:CHARS. --generate alone (or
            --generate=default): kc generate's defaults, 24 characters with
            letters, digits and symbols.

            With --totp the secret is an otpauth:// URI or the base32 secret a site
            shows (with --algorithm, --digits, --period or --counter); it is checked
            and stored as service otpauth/SERVICE, where kc import puts seeds and
            kc totp -s SERVICE finds them.

            With --class internet, a URL as -s (https://host[:port]/path) is split
            into server, protocol, port and path, as kc import splits one, and stderr
            says what was stored; flags that say otherwise are a usage error.

            The secret is stored with its exact bytes; on a terminal, kc warns when
            one from stdin or a file ends in a newline. An empty secret is refused
            (exit 206) unless --allow-empty is given. The first add with no keychain
            creates the default one (asking for its new password). Exit 45 when the
            item exists (without -U). With --user-presence, every read of the secret
            asks for the keychain password on the terminal, even while the keychain
            is unlocked; without a terminal the read fails (exit 36).

            --accessible after-first-unlock keeps the item readable through the
            agent after kc lock and auto-lock, until the agent stops or the
            machine restarts (for cron jobs); the default, when-unlocked, only
            while unlocked. *-this-device-only items never leave this machine:
            kc export leaves them out.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var secret: SecretOptions
    /// --totp and the flags of a base32 seed.
    @OptionGroup var oneTime: OneTimeOptions

    @Flag(name: Options.updateIfExists.names, help: Options.updateIfExists.help)
    var updateIfExists = false

    @Option(name: Options.addGenerate.names, help: Options.addGenerate.help, completion: Options.addGenerate.completion)
    var generate: String?

    @Flag(name: Options.printGenerated.names, help: Options.printGenerated.help)
    var printSecret = false

    @Option(name: Options.accessible.names, parsing: .unconditional, help: Options.accessible.help, completion: Options.accessible.completion)
    var accessible: Accessibility?

    @Option(name: Options.addKDF.names, parsing: .unconditional, help: Options.addKDF.help, completion: Options.addKDF.completion)
    var kdf: KDFProfile?

    @Flag(name: Options.userPresence.names, help: Options.userPresence.help)
    var userPresence = false

    func validate() throws {
        if generate != nil && secret.isGiven {
            throw ValidationError("--generate makes the secret, and -w or --data-file gives one; use one of them")
        }
        if generate != nil && oneTime.totp {
            throw ValidationError("--generate makes a random secret, and --totp stores a seed a site gives; use one of them")
        }
        if printSecret && generate == nil {
            throw ValidationError("--print shows a generated secret: use it with --generate")
        }
        if generate == nil { try secret.checkStdinIsNotShared(passwordStdin: keychain.passwordStdin) }
        if (item.itemClass == .certificate || item.itemClass == .key) && secret.dataFile == nil {
            throw ValidationError("a \(item.itemClass.rawValue) is added from a file: --data-file PATH")
        }
    }

    func run() throws {
        secret.scrubArgv()
        var fields = item.fields
        try fields.checkFitsClass()
        if oneTime.totp { fields = try oneTime.storedFields(fields) }
        try secret.checkArgument()
        if fields.itemClass == .generic || fields.itemClass == .internet {
            if (fields.service ?? "").isEmpty && (fields.account ?? "").isEmpty {
                throw KeychainError(
                    errSecParam, "an item needs a service (-s) or an account (-a)",
                    hint: "for example: kc add -s github.com -a alice")
            }
        }
        // A SPEC that cannot be used is refused before any password is asked for.
        let recipe = try generate.map { try GenerationRequest(spec: $0).recipe() }
        accessible?.warnIfDeprecated()
        let keychain = try Session.openOrCreateDefault(self.keychain.choice, profile: kdf ?? Configuration.kdf)
        // The keychain password is asked for before the secret. A secret user presence will
        // protect never goes to the agent: the keychain is opened here for it.
        if userPresence { try keychain.prepareHere() } else { try keychain.prepare() }
        let value: SecureBytes
        if let recipe {
            value = try PasswordGenerator.generate(recipe)
        } else {
            value = try secret.read(confirm: true, stdinTaken: self.keychain.passwordStdin)
        }
        let data = oneTime.totp ? try oneTime.storedSecret(value, fields: fields) : value.withUnsafeBytes { Data($0) }
        var query = fields.query
        if fields.itemClass == .internet && query[kSecAttrAuthenticationType] == nil {
            query[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault
        }
        query[kSecValueData] = data
        if let accessible { query[kSecAttrAccessible] = accessible.code }
        if userPresence { query[kcAttrAccessControlFlags] = Int(AccessControlFlags.userPresence) }
        do {
            _ = try keychain.add(query)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            guard updateIfExists else {
                throw KeychainError(
                    errSecDuplicateItem, "an item matching \(fields.summary) already exists in \(keychain.path)",
                    hint: "replace its secret with `kc add -U ...` or `kc update ...`")
            }
            try replaceExisting(keychain, fields: fields, data: data)
        }
        // A pasted URL was split (`ServerURL`): say into what, so a surprise shows at once.
        if let serverURL = try fields.serverURL { Report.note("stored as \(serverURL.description)") }
        if let recipe {
            reportGenerated(value, recipe: recipe)
        } else if !oneTime.totp {
            secret.noteTrailingNewline(data.last == 0x0A, stdinTaken: self.keychain.passwordStdin)
        }
    }

    /// --generate: the secret on stdout only with --print (as kc find -w prints it), and
    /// its entropy on stderr when a person is at the terminal.
    private func reportGenerated(_ value: borrowing SecureBytes, recipe: PasswordRecipe) {
        if printSecret {
            _ = value.withUnsafeBytes { Report.writeAll(1, $0) }
            if Terminal.stdoutIsTerminal { Report.writeAll(1, [0x0A]) }
        }
        if isatty(2) == 1 { Report.note("stored a generated secret: " + recipe.entropyLine) }
    }

    /// -U: the item exists; give it the new secret and the attributes given (`item`: the
    /// fields as stored, `--totp`'s otpauth/ service included).
    private func replaceExisting(_ keychain: KeychainSession, fields item: ItemFields, data: Data) throws {
        let identifying: Set<String> = [
            kSecAttrAccount, kSecAttrService, kSecAttrServer, kSecAttrSecurityDomain, kSecAttrPath,
            kSecAttrPort, kSecAttrProtocol, kSecAttrAuthenticationType, kSecAttrApplicationTag
        ]
        var query: [String: Any] = [kSecClass: item.itemClass.secClass]
        var changes: [String: Any] = [kSecValueData: data]
        if let accessible { changes[kSecAttrAccessible] = accessible.code }
        for (key, value) in item.attributes {
            if identifying.contains(key) { query[key] = value } else { changes[key] = value }
        }
        if item.itemClass == .internet && query[kSecAttrAuthenticationType] == nil {
            query[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault
        }
        let matches = try keychain.count(query.merging([kSecMatchLimit: kSecMatchLimitAll]) { a, _ in a })
        guard matches == 1 else {
            throw KeychainError(
                errSecDuplicateItem, "\(matches) items match \(item.summary); -U replaces exactly one",
                hint: "narrow the query, or use `kc update --all`")
        }
        try keychain.update(query, changes)
    }
}
