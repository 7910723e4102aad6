/// The arguments of a `kc ssh` key command: its positional word and options, checked
/// against what the command takes (`KeyCommands.usages`).
struct KeyArguments {
    /// The positional argument (FILE or NAME), nil for `list`.
    var subject: String?
    /// `-k KEYCHAIN`.
    var keychain: String?
    /// `--name NAME` (add).
    var name: String?
    /// `--passphrase-file FILE` (add).
    var passphraseFile: String?
    /// `--user-presence` (add, generate).
    var userPresence = false
    /// `--type ed25519|ecdsa|rsa` (generate).
    var type: String?
    /// `--bits N` (generate).
    var bits: Int?

    /// Parses `arguments` for `command`. - Throws: `UsageError`.
    init(_ arguments: [String], command: String) throws {
        let valued: Set<String> =
            switch command {
            case "add": ["-k", "--keychain", "--name", "--passphrase-file"]
            case "generate": ["-k", "--keychain", "--type", "--bits"]
            default: ["-k", "--keychain"]
            }
        let flags: Set<String> = command == "add" || command == "generate" ? ["--user-presence"] : []
        var positional: [String] = []
        var rest = arguments[...]
        var onlyPositional = false
        while let word = rest.popFirst() {
            if onlyPositional || !word.hasPrefix("-") || word == "-" {
                positional.append(word)
                continue
            }
            if word == "--" {
                onlyPositional = true
                continue
            }
            var option = word
            var inline: String?
            if word.hasPrefix("--"), let eq = word.firstIndex(of: "=") {
                option = String(word[..<eq])
                inline = String(word[word.index(after: eq)...])
            }
            if flags.contains(option), inline == nil {
                userPresence = true
                continue
            }
            guard valued.contains(option) else { throw UsageError(message: "unknown option '\(word)'") }
            guard let value = inline ?? rest.popFirst(), !value.isEmpty else {
                throw UsageError(message: "missing value for '\(option)'")
            }
            switch option {
            case "-k", "--keychain": keychain = value
            case "--name": name = value
            case "--passphrase-file": passphraseFile = value
            case "--type": type = value
            default:
                guard let n = Int(value) else { throw UsageError(message: "--bits takes a number, not '\(value)'") }
                bits = n
            }
        }
        let wanted = command == "list" ? 0 : 1
        guard positional.count <= wanted else { throw UsageError(message: "unexpected argument '\(positional[wanted])'") }
        guard positional.count == wanted else {
            throw UsageError(message: command == "add" ? "missing the key file" : "missing the key's NAME")
        }
        subject = positional.first
    }
}
