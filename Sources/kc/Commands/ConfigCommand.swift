import ArgumentParser
import KeychainCore
import KeychainFormats
import POSIXSupport

/// `kc config`: the settings in force and where each comes from (a flag, a variable, a line
/// of the configuration file, or kc's default), as `git config --show-origin` shows git's.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the settings in force and where each comes from (the configuration file, docs/config.md).",
        discussion: """
            The file is $XDG_CONFIG_HOME/kc/config, else ~/.config/kc/config: one
            KEY = VALUE a line, # comments. Every key is optional:
              keychain = work         # as -k: NAME, absolute or ~/ path, team:NAME
              idle-timeout = 600      # the agent locks after 600 s unused
              max-timeout = 28800     # and 8 h after the unlock, whatever happens
              unlock-on-prompt = no   # a typed password does not unlock the agent
              clip-seconds = 20       # what --clip alone means
              kdf = sensitive         # the profile of new keychains
              team = infra            # the team when a team command names none

            A flag beats the environment (KC_KEYCHAIN, KC_UNLOCK_ON_PROMPT), which
            beats the file, which beats kc's default. An unknown key, a bad value or
            a bad line stops every command with exit 206, naming the file and line; so
            does a file another user owns or can write (chmod go-w). No file is fine.

            Examples:
              kc config
              kc -k work config       # -k wins over the file
              kc config --json
            """
    )

    @Option(name: Options.keychain.names, parsing: .unconditional, help: Options.keychain.help, completion: Options.keychain.completion)
    var keychain: String?

    @Flag(name: Options.configJSON.names, help: Options.configJSON.help)
    var json = false

    func validate() throws {
        try KeychainChoice(keychain: keychain).validate()
    }

    /// Where a value in force comes from.
    enum Source {
        case flag(String)
        case environment(String)
        case file(path: String, line: Int)
        case builtIn

        /// As the text output names it: `flag -k`, `env KC_KEYCHAIN`, `PATH:LINE`, `default`.
        var text: String {
            switch self {
            case .flag(let name): "flag " + name
            case .environment(let name): "env " + name
            case .file(let path, let line): "\(path):\(line)"
            case .builtIn: "default"
            }
        }

        /// As JSON fields: `"source"` and what names it.
        var json: [(String, String)] {
            switch self {
            case .flag(let name): [("source", JSON.string("flag")), ("flag", JSON.string(name))]
            case .environment(let name): [("source", JSON.string("env")), ("variable", JSON.string(name))]
            case .file(let path, let line): [("source", JSON.string("file")), ("path", JSON.string(path)), ("line", String(line))]
            case .builtIn: [("source", JSON.string("default"))]
            }
        }
    }

    /// One setting: its key, its value as text and as JSON, and its source.
    struct Row {
        var key: String
        var text: String
        var json: String
        var source: Source
    }

    func run() throws {
        let file = Configuration.file
        let rows = Self.rows(file, keychain: keychain)
        if json {
            let settings = rows.map { row in JSON.object([("key", JSON.string(row.key)), ("value", row.json)] + row.source.json) }
            let path = file.path.map(JSON.string) ?? "null"
            Report.out(JSON.object([("file", path), ("exists", file.exists ? "true" : "false"), ("settings", JSON.array(settings))]) + "\n")
            return
        }
        let where_ = file.path.map { TerminalSafe.escaped($0) + (file.exists ? "" : " (not there: kc's defaults)") }
        Report.out("configuration file: \(where_ ?? "none (neither XDG_CONFIG_HOME nor HOME is set)")\n")
        let keyWidth = rows.map(\.key.count).max() ?? 0
        let valueWidth = rows.map { TerminalSafe.escaped($0.text).count }.max() ?? 0
        for row in rows {
            let key = row.key.padding(keyWidth)
            let value = TerminalSafe.escaped(row.text).padding(valueWidth)
            Report.out("\(key)  \(value)  \(TerminalSafe.escaped(row.source.text))\n")
        }
    }

    /// Every key of the file, in its order, with the value in force and its source.
    static func rows(_ file: ConfigFile, keychain flag: String?) -> [Row] {
        func from<V: Sendable>(_ entry: ConfigFile.Entry<V>?) -> Source {
            guard let entry, let path = file.path else { return .builtIn }
            return .file(path: path, line: entry.line)
        }
        var rows: [Row] = []

        let keychainSource: Source =
            flag != nil
            ? .flag(Options.keychain.displayName)
            : Configuration.environmentKeychain != nil ? .environment("KC_KEYCHAIN") : from(file.keychain)
        let chosen = KeychainChoice(keychain: flag).path
        rows.append(Row(key: "keychain", text: chosen, json: JSON.string(chosen), source: keychainSource))

        let own = "the keychain's own (kc settings)"
        for (key, entry) in [("idle-timeout", file.idleTimeout), ("max-timeout", file.maxTimeout)] {
            let text = entry.map { String($0.value) } ?? own
            rows.append(Row(key: key, text: text, json: entry.map { String($0.value) } ?? "null", source: from(entry)))
        }

        let unlock = Environment.unlockOnPrompt
        let unlockSource: Source =
            Environment.get("KC_UNLOCK_ON_PROMPT") != nil ? .environment("KC_UNLOCK_ON_PROMPT") : from(file.unlockOnPrompt)
        rows.append(Row(key: "unlock-on-prompt", text: unlock ? "yes" : "no", json: unlock ? "true" : "false", source: unlockSource))

        let clip = Configuration.clipSeconds
        rows.append(Row(key: "clip-seconds", text: String(clip), json: String(clip), source: from(file.clipSeconds)))

        let kdf = Configuration.kdf.rawValue
        rows.append(Row(key: "kdf", text: kdf, json: JSON.string(kdf), source: from(file.kdf)))

        let team = file.team?.value
        rows.append(Row(key: "team", text: team ?? "(none)", json: team.map(JSON.string) ?? "null", source: from(file.team)))
        return rows
    }
}

extension String {
    /// The text followed by spaces up to `width` characters.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
