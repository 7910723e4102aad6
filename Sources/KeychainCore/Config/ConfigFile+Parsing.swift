/// The lines of the configuration file (`ConfigFile`, docs/config.md).
extension ConfigFile {
    /// Parses the file's bytes: `KEY = VALUE` lines, `#` comments, blank lines.
    /// - Throws: errSecParam, the message starting `PATH:LINE:`, for the first line that is
    ///   not text, has no `=`, names an unknown key or one given before, or has a value the
    ///   key does not take.
    public static func parse(_ bytes: [UInt8], path: String) throws -> ConfigFile {
        var file = ConfigFile(path: path, exists: true)
        var seen: [(key: String, line: Int)] = []
        var number = 0
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            func fail(_ message: String, hint: String? = nil) -> KeychainError {
                KeychainError(
                    errSecParam, "\(path):\(number): \(message)", hint: hint ?? "`kc config --help` and docs/config.md list the keys and their values")
            }
            var lineBytes = raw[...]
            if lineBytes.last == 0x0D { lineBytes = lineBytes.dropLast() }
            guard !lineBytes.contains(0), let text = String(validating: lineBytes, as: UTF8.self) else {
                throw fail("not UTF-8 text")
            }
            let line = trimmed(text[...])
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                throw fail("sections are not used: write KEY = VALUE lines only")
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail("expected KEY = VALUE, found \"\(line)\"")
            }
            let key = String(trimmed(line[..<equals]))
            let value = String(trimmed(withoutComment(line[line.index(after: equals)...])))
            guard keys.contains(key) else {
                let dashed = String(key.lowercased().map { $0 == "_" ? "-" : $0 })
                let hint = keys.contains(dashed) ? "did you mean \(dashed)?" : "the keys are " + keys.joined(separator: ", ")
                throw fail("unknown key \"\(key)\"", hint: hint)
            }
            if let earlier = seen.first(where: { $0.key == key }) {
                throw fail("\(key) is given twice (lines \(earlier.line) and \(number))", hint: "keep one of them")
            }
            seen.append((key, number))
            guard !value.isEmpty else { throw fail("\(key) has no value") }
            do {
                try file.set(key, value, line: number)
            } catch let error as KeychainError {
                throw fail(error.message, hint: error.hint)
            }
        }
        return file
    }

    /// Sets one key from its text.
    /// - Throws: errSecParam saying what the key takes.
    private mutating func set(_ key: String, _ value: String, line: Int) throws {
        switch key {
        case "keychain":
            keychain = Entry(value: try Self.keychainValue(value), line: line)
        case "idle-timeout", "max-timeout":
            guard let seconds = UInt64(value), (1...Keychain.maxTimeout).contains(seconds) else {
                throw KeychainError(errSecParam, "\(key) is \"\(value)\": give whole seconds, 1 to \(Keychain.maxTimeout) (a year)")
            }
            if key == "idle-timeout" { idleTimeout = Entry(value: seconds, line: line) } else { maxTimeout = Entry(value: seconds, line: line) }
        case "unlock-on-prompt":
            guard let on = Self.boolean(value) else {
                throw KeychainError(errSecParam, "unlock-on-prompt is \"\(value)\": give yes or no (true/false, on/off, 1/0)")
            }
            unlockOnPrompt = Entry(value: on, line: line)
        case "clip-seconds":
            guard let seconds = Int(value), (1...Self.maxClipSeconds).contains(seconds) else {
                throw KeychainError(errSecParam, "clip-seconds is \"\(value)\": give whole seconds, 1 to \(Self.maxClipSeconds) (a day)")
            }
            clipSeconds = Entry(value: seconds, line: line)
        case "kdf":
            guard let profile = KDFProfile(rawValue: value) else {
                throw KeychainError(errSecParam, "kdf is \"\(value)\": give interactive, moderate or sensitive")
            }
            kdf = Entry(value: profile, line: line)
        case "team":
            let name = value.hasPrefix(KeychainAddress.teamPrefix) ? String(value.dropFirst(KeychainAddress.teamPrefix.count)) : value
            guard let address = try? KeychainAddress(teamName: name), case .team(let checked) = address else {
                throw KeychainError(
                    errSecParam, "team is \"\(value)\": a team name is 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit",
                    hint: "team = NAME chooses the team keychain team:NAME")
            }
            team = Entry(value: checked, line: line)
        default:
            break   // `parse` refused every other key
        }
    }

    /// The `keychain` value, as `-k` takes it, with `~/` as the home folder: a NAME, an
    /// absolute path or `team:NAME`. A relative path is refused: it would mean a
    /// different keychain in every working folder.
    static func keychainValue(_ value: String) throws -> String {
        var word = value
        if word.hasPrefix("~/") {
            guard let home = KeychainLocation.environment("HOME"), home.hasPrefix("/") else {
                throw KeychainError(errSecParam, "keychain starts with ~/ but HOME is not set")
            }
            word = home + word.dropFirst(1)
        }
        let address = try KeychainAddress(word)
        if case .file = address, KeychainLocation.isPath(word), !word.hasPrefix("/") {
            throw KeychainError(
                errSecParam, "keychain is the relative path \"\(value)\", which would change with the working folder",
                hint: "give an absolute path, one under ~/, or a NAME (for \(KeychainLocation.directory)/NAME.keychain-db)")
        }
        return word
    }

    /// yes/no in the spellings `KC_UNLOCK_ON_PROMPT` takes (any case); nil for anything else.
    public static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: return nil
        }
    }

    /// The text without spaces and tabs around it.
    static func trimmed(_ text: Substring) -> Substring {
        var out = text
        while let first = out.first, first == " " || first == "\t" { out = out.dropFirst() }
        while let last = out.last, last == " " || last == "\t" { out = out.dropLast() }
        return out
    }

    /// A value without its trailing comment: from the first `#` that follows a space or a
    /// tab (`600  # ten minutes`), or starts it; a `#` inside a word stays (`a#b`).
    static func withoutComment(_ text: Substring) -> Substring {
        var previous: Character = " "
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if c == "#" && (previous == " " || previous == "\t") { return text[..<index] }
            previous = c
            index = text.index(after: index)
        }
        return text
    }
}
