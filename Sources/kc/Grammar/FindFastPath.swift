import KeychainCore
/// `kc find` parsed without swift-argument-parser.
///
/// ArgumentParser builds its model of every option by reflection each time a process starts:
/// about 12 million instructions, 95% of a `kc find -w` answered by the agent
/// (docs/performance.md has the profile). `kc find` is what scripts call a thousand times,
/// so its plain forms are parsed here by hand into the same `FindRequest` that ArgumentParser's
/// `Find` would give. Anything else (help, an unknown, repeated or grouped flag, a value that
/// looks like a flag, a value of the wrong type, a validation error) gives nil, and
/// ArgumentParser parses the whole command line as usual, so every message stays its own.
///
/// The names it knows are one table, `Value` and `Switch` with their `spellings`; the lookup
/// reads that table, and FastPathDriftTests compares it with the names ArgumentParser
/// declares for `Find` (its `--experimental-dump-help` model), so an option added on one
/// side only fails the tests. FastPathTests checks, argument list by argument list, that
/// both parsers agree.
enum FindFastPath {
    // Plain switches, arrays and struct fields, no Set or Dictionary: in a static binary each
    // generic type's first use that needs a protocol conformance costs a scan of every
    // conformance record, which here cost more than the rest of the command.

    /// The options of `kc find` that take a value.
    enum Value: CaseIterable {
        case keychain, passwordFile, itemClass, account, service, label, kind, comment, generic
        case creator, type, securityDomain, path, port, `protocol`, authType, tag, limit, prompt, clip

        /// The option's names, as `Find`, `ItemOptions` and `KeychainOptions` declare them.
        var spellings: [String] {
            switch self {
            case .keychain: return ["-k", "--keychain"]
            case .passwordFile: return ["--password-file"]
            case .itemClass: return ["--class"]
            case .account: return ["-a", "--account"]
            case .service: return ["-s", "--service"]
            case .label: return ["-l", "--label"]
            case .kind: return ["-D", "--kind"]
            case .comment: return ["-j", "--comment"]
            case .generic: return ["-G", "--generic"]
            case .creator: return ["-c", "--creator"]
            case .type: return ["-C", "--type"]
            case .securityDomain: return ["-d", "--security-domain"]
            case .path: return ["-p", "--path"]
            case .port: return ["-P", "--port"]
            case .protocol: return ["-r", "--protocol"]
            case .authType: return ["-t", "--auth-type"]
            case .tag: return ["--tag"]
            case .limit: return ["--limit"]
            case .prompt: return ["--prompt"]
            case .clip: return ["--clip"]
            }
        }
    }

    /// The flags of `kc find` (no value). `-h`, `--help` and `--version` are not here: they
    /// are ArgumentParser's, and left to it.
    enum Switch: CaseIterable {
        case passwordStdin, secretOnly, withSecret, hex, base64, json, all, ignoreCase, contains, prefix

        /// The flag's names, as `Find`, `KeychainOptions` and `MatchOptions` declare them.
        var spellings: [String] {
            switch self {
            case .passwordStdin: return ["--password-stdin"]
            case .secretOnly: return ["-w"]
            case .withSecret: return ["-g"]
            case .hex: return ["--hex"]
            case .base64: return ["--base64"]
            case .json: return ["--json"]
            case .all: return ["--all"]
            case .ignoreCase: return ["--ignore-case"]
            case .contains: return ["--contains"]
            case .prefix: return ["--prefix"]
            }
        }
    }

    /// The option `name` (such as `-s` or `--service`) names, from the table.
    private static func value(named name: Substring) -> Value? {
        for key in Value.allCases where key.spellings.contains(where: { $0 == name }) { return key }
        return nil
    }

    /// The flag `name` (such as `-w`) names, from the table.
    private static func `switch`(named name: Substring) -> Switch? {
        for flag in Switch.allCases where flag.spellings.contains(where: { $0 == name }) { return flag }
        return nil
    }

    /// The request for the arguments after `find`, or nil when ArgumentParser should parse them.
    static func parse(_ arguments: ArraySlice<String>) -> FindRequest? {
        var request = FindRequest(keychain: KeychainChoice(), item: ItemFields())
        var classGiven = false
        var rest = arguments
        while let argument = rest.popFirst() {
            var name = argument[...]
            var attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = argument[..<equals]
                attached = String(argument[argument.index(after: equals)...])
            }
            if let key = value(named: name) {
                let text: String
                if let attached {
                    guard !attached.isEmpty else { return nil }
                    text = attached
                } else {
                    // Unconditionally the next word, as ArgumentParser's `.unconditional`.
                    guard let next = rest.popFirst() else { return nil }
                    text = next
                }
                if key == .itemClass {
                    guard !classGiven, let parsed = CLIClass(rawValue: text) else { return nil }
                    classGiven = true
                    request.item.itemClass = parsed
                } else {
                    guard store(text, as: key, in: &request) else { return nil }
                }
            } else if attached == nil, let flag = `switch`(named: name) {
                guard turnOn(flag, in: &request) else { return nil }
            } else {
                return nil
            }
        }
        // ArgumentParser validates the option groups and then the command; any failure is
        // left to it, so its message is the one the user sees.
        do {
            try request.keychain.validate()
            try request.item.validate()
            try request.validate()
        } catch {
            return nil
        }
        return request
    }

    /// Stores an option's value; false when it was given twice or is not a number where one
    /// is wanted.
    private static func store(_ text: String, as key: Value, in request: inout FindRequest) -> Bool {
        switch key {
        case .keychain: return fill(&request.keychain.keychain, text)
        case .passwordFile: return fill(&request.keychain.passwordFile, text)
        case .itemClass: return false
        case .account: return fill(&request.item.account, text)
        case .service: return fill(&request.item.service, text)
        case .label: return fill(&request.item.label, text)
        case .kind: return fill(&request.item.kind, text)
        case .comment: return fill(&request.item.comment, text)
        case .generic: return fill(&request.item.generic, text)
        case .creator: return fill(&request.item.creator, text)
        case .type: return fill(&request.item.type, text)
        case .securityDomain: return fill(&request.item.securityDomain, text)
        case .path: return fill(&request.item.path, text)
        case .protocol: return fill(&request.item.protocol, text)
        case .authType: return fill(&request.item.authType, text)
        case .tag: return fill(&request.item.tag, text)
        case .prompt: return fill(&request.prompt, text)
        case .port:
            guard request.item.port == nil, let n = Int(text) else { return false }
            request.item.port = n
            return true
        case .limit:
            guard request.limit == nil, let n = Int(text) else { return false }
            request.limit = n
            return true
        case .clip:
            guard request.clip == nil, let n = Int(text) else { return false }
            request.clip = n
            return true
        }
    }

    /// Stores a string option's value; false when the option was given twice.
    private static func fill(_ field: inout String?, _ text: String) -> Bool {
        guard field == nil else { return false }
        field = text
        return true
    }

    /// Turns a flag on; false when it was given twice.
    private static func turnOn(_ flag: Switch, in request: inout FindRequest) -> Bool {
        func once(_ field: inout Bool) -> Bool {
            guard !field else { return false }
            field = true
            return true
        }
        switch flag {
        case .passwordStdin: return once(&request.keychain.passwordStdin)
        case .secretOnly: return once(&request.secretOnly)
        case .withSecret: return once(&request.withSecret)
        case .hex: return once(&request.hex)
        case .base64: return once(&request.base64)
        case .json: return once(&request.json)
        case .all: return once(&request.all)
        case .ignoreCase: return once(&request.matching.ignoreCase)
        case .contains: return once(&request.matching.contains)
        case .prefix: return once(&request.matching.prefix)
        }
    }
}
