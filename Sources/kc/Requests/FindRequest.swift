import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// What `kc find` was asked, once parsed (by ArgumentParser through `Find`, or by
/// `FindFastPath` through `take`), and how it is answered.
struct FindRequest: Equatable {
    var keychain: KeychainChoice
    var item: ItemFields
    /// -w: only the secret.
    var secretOnly = false
    /// -g: the attributes and the secret.
    var withSecret = false
    var hex = false
    var base64 = false
    var json = false
    var all = false
    var limit: Int?
    /// --prompt: kSecUseOperationPrompt, shown when an item requires user presence.
    var prompt: String?
    /// --ignore-case, --contains, --prefix.
    var matching = TextMatching()
    /// --clip [SECONDS]: the secret goes to the clipboard (as with -w) instead of stdout.
    var clip: Int?

    /// Whether only the secret is wanted: -w, or --clip.
    private var secretOnlyOrClip: Bool { secretOnly || clip != nil }

    /// How each option of `kc find` fills the request, for `FindFastPath` (ArgumentParser's
    /// `Find` fills it from its properties, `request`): `text` is the value, nil for a flag.
    /// - Returns: false when `text` is not a value the option takes, or the option is not
    ///   find's; ArgumentParser then parses the command line and says why.
    mutating func take(_ option: OptionSpec, _ text: String?) -> Bool {
        switch option {
        case Options.keychain: keychain.keychain = text
        case Options.passwordStdin: keychain.passwordStdin = true
        case Options.passwordFile: keychain.passwordFile = text
        case Options.itemClass:
            guard let parsed = text.flatMap(CLIClass.init(rawValue:)) else { return false }
            item.itemClass = parsed
        case Options.account: item.account = text
        case Options.service: item.service = text
        case Options.label: item.label = text
        case Options.kind: item.kind = text
        case Options.comment: item.comment = text
        case Options.generic: item.generic = text
        case Options.creator: item.creator = text
        case Options.type: item.type = text
        case Options.securityDomain: item.securityDomain = text
        case Options.path: item.path = text
        case Options.port:
            guard let n = text.flatMap({ Int($0) }) else { return false }
            item.port = n
        case Options.protocol: item.protocol = text
        case Options.authType: item.authType = text
        case Options.tag: item.tag = text
        case Options.secretOnly: secretOnly = true
        case Options.withSecret: withSecret = true
        case Options.hex: hex = true
        case Options.base64: base64 = true
        case Options.findJSON: json = true
        case Options.findAll: all = true
        case Options.limit:
            guard let n = text.flatMap({ Int($0) }) else { return false }
            limit = n
        case Options.findPrompt: prompt = text
        case Options.ignoreCase: matching.ignoreCase = true
        case Options.contains: matching.contains = true
        case Options.prefix: matching.prefix = true
        case Options.clip:
            guard let n = text.flatMap({ Int($0) }) else { return false }
            clip = n
        default: return false
        }
        return true
    }

    /// `kc find SERVICE`: the service given as the argument, as -s gives it.
    /// - Returns: false when -s gave one too (`serviceGivenTwice`).
    mutating func take(argument: String) -> Bool {
        guard item.service == nil else { return false }
        item.service = argument
        return true
    }

    /// The usage error for `kc find SERVICE -s SERVICE`.
    static let serviceGivenTwice = "give the service once: as the argument (kc find SERVICE) or with -s"

    func validate() throws {
        try ClipOptions.check(clip)
        if clip != nil && (withSecret || json || all || limit != nil) {
            throw ValidationError("--clip copies one secret; drop -g, --json, --all and --limit")
        }
        if (hex || base64) && !secretOnly { throw ValidationError("--hex and --base64 go with -w") }
        if hex && base64 { throw ValidationError("choose one of --hex and --base64") }
        if secretOnly && (all || limit != nil) { throw ValidationError("-w prints one secret; drop --all / --limit, or use --json -g") }
        if secretOnly && withSecret { throw ValidationError("choose one of -w and -g") }
        if all && limit != nil { throw ValidationError("choose one of --all and --limit") }
        if let limit, limit < 1 { throw ValidationError("--limit must be a positive number of items (at least 1)") }
        try matching.validate()
    }

    func run() throws {
        try item.checkFitsClass()
        let keychain = try Session.open(self.keychain)
        var query = item.query
        let many = all || limit != nil
        if all { query[kSecMatchLimit] = kSecMatchLimitAll }
        if let limit { query[kSecMatchLimit] = limit }
        matching.apply(to: &query)
        if let prompt { query[kSecUseOperationPrompt] = prompt }
        if secretOnlyOrClip {
            // Two, to say so when the query does not choose one item (an import can bring the
            // same login twice); the first is the one printed, as with a limit of one. Only the
            // data: the attributes that name the difference are asked for only then.
            query[kSecMatchLimit] = 2
            query[kSecReturnData] = true
        } else {
            query[kSecReturnAttributes] = true
            if withSecret { query[kSecReturnData] = true }
            // Attributes only: two, to say so when the query does not choose one item, as -w
            // does. With -g the second's secret is not read (it may require user presence).
            if !many && !withSecret { query[kSecMatchLimit] = 2 }
        }
        var result: Any?
        var retried = false
        do {
            do {
                result = try keychain.copyMatching(secretOnly ? Self.withoutAsking(query) : query)
            } catch let error as KeychainError where secretOnly && UserPresenceRequired.isRefusedWithoutAsking(error) {
                // One of the two matches requires user presence: ask only if it is the one
                // printed (a second match that does must not fail a script reading the first).
                var first = query
                first[kSecMatchLimit] = kSecMatchLimitOne
                result = (try keychain.copyMatching(first)).map { [$0] }
                retried = true
            }
        } catch let error as KeychainError where error.status == errSecItemNotFound {
            throw KeychainError(
                errSecItemNotFound, "no item matches \(matching.describe(item.summary)) in \(keychain.path)",
                hint: "list what is there with `kc list`")
        }
        if secretOnlyOrClip {
            let secrets = result as? [Data] ?? []
            guard let data = secrets.first else {
                throw KeychainError(errSecItemNotFound, "the item matching \(matching.describe(item.summary)) has no secret")
            }
            if secrets.count > 1 || retried {
                var both = query
                both[kSecReturnData] = nil
                both[kSecReturnAttributes] = true
                let attributes = (try? keychain.copyMatching(both)) as? [[String: Any]] ?? []
                if attributes.count > 1 {
                    warnAboutSecondMatch(attributes.first ?? [:], attributes.dropFirst().first ?? [:], printed: "printed the secret of the first")
                }
            }
            if let clip {
                try Clipboard.copy(secret: rendered(data), clearAfter: clip)
            } else {
                printSecret(data)
            }
            return
        }
        // A limit of 1 gives a single dictionary (Apple's shape); print it as a one-element list.
        var items: [[String: Any]] = (result as? [[String: Any]]) ?? [(result as? [String: Any]) ?? [:]]
        if !many {
            var second = items.dropFirst().first
            if second == nil && withSecret {
                var both = query
                both[kSecReturnData] = nil
                both[kSecMatchLimit] = 2
                second = ((try? keychain.copyMatching(both)) as? [[String: Any]] ?? []).dropFirst().first
            }
            items = Array(items.prefix(1))
            if let second { warnAboutSecondMatch(items.first ?? [:], second, printed: withSecret ? "printed the first, with its secret" : "printed the first") }
        }
        let className = item.itemClass.rawValue
        if json {
            let objects = items.map { dict -> String in
                var attributes = dict
                let data = attributes.removeValue(forKey: kSecValueData) as? Data
                return ItemJSON.json(className: className, attributes: attributes, secret: data)
            }
            Report.out((many ? JSON.array(objects) : objects.first ?? "{}") + "\n")
        } else if many && !withSecret && Terminal.stdoutIsTerminal {
            // Several items, read by a person: kc list's lines (one per item, aligned, sorted).
            // Scripts keep the blocks below, which say every attribute.
            let rows = items.map { List.cells(item.itemClass, $0) }
            let order = rows.indices.sorted { List.precedes(rows[$0], rows[$1]) }
            Report.out(ItemTable(rows: order.map { rows[$0] }).aligned(width: TerminalWidth.stdoutColumns))
        } else {
            let texts = items.map { dict -> String in
                var attributes = dict
                let data = attributes.removeValue(forKey: kSecValueData) as? Data
                return ItemPrinter.text(className: className, attributes: attributes, secret: withSecret ? (data ?? Data()) : nil)
            }
            Report.out(texts.joined(separator: "\n"))
        }
    }

    /// `query` with kSecUseAuthenticationUIFail: an item that requires user presence fails
    /// it with errSecInteractionNotAllowed instead of asking.
    private static func withoutAsking(_ query: [String: Any]) -> [String: Any] {
        var q = query
        q[kSecUseAuthenticationUI] = kSecUseAuthenticationUIFail
        return q
    }

    /// Says on stderr that the query matched more than one item and which flags tell the
    /// first two apart (their names only: values can be private and stderr ends up in CI logs).
    private func warnAboutSecondMatch(_ first: [String: Any], _ second: [String: Any], printed: String) {
        let flags: [(String, OptionSpec)] = [
            (kSecAttrAccount, Options.account), (item.itemClass == .internet ? kSecAttrServer : kSecAttrService, Options.service),
            (kSecAttrPath, Options.path), (kSecAttrPort, Options.port), (kSecAttrProtocol, Options.protocol),
            (kSecAttrSecurityDomain, Options.securityDomain), (kSecAttrLabel, Options.label), (kSecAttrDescription, Options.kind),
            (kSecAttrComment, Options.comment), (kSecAttrGeneric, Options.generic)
        ]
        let differing = flags.filter { key, _ in
            ItemPrinter.textValue(first[key] ?? "", name: key) != ItemPrinter.textValue(second[key] ?? "", name: key)
        }.map(\.1.shortest)
        var hint = "`kc find \((item.arguments + matching.arguments).joined(separator: " ")) --all` lists them"
        if !differing.isEmpty { hint = "narrow the query with \(differing.joined(separator: ", ")) (they differ there); " + hint }
        Report.note("warning: more than one item matches \(matching.describe(item.summary)); \(printed)")
        Report.note("hint: " + hint)
    }

    /// What --clip copies: the secret's exact bytes, or their --hex / --base64 text.
    private func rendered(_ data: Data) -> Data {
        if hex { return Data(ItemPrinter.hex(Array(data)).utf8) }
        if base64 { return Data(data.base64EncodedString().utf8) }
        return data
    }

    /// The secret's exact bytes; on a terminal, a newline after it and its control
    /// characters escaped (`SecretOutput`).
    private func printSecret(_ data: Data) {
        if hex {
            Report.out(ItemPrinter.hex(Array(data)) + "\n")
        } else if base64 {
            Report.out(data.base64EncodedString() + "\n")
        } else {
            data.withUnsafeBytes { SecretOutput.write($0) }
        }
    }
}
