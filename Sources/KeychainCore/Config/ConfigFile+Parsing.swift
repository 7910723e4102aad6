/// The lines of the configuration file (`ConfigFile`, docs/config.md).
extension ConfigFile {
    /// Parses the file's bytes: `KEY = VALUE` lines, `#` comments, blank lines.
    ///
    /// Done on the bytes, with plain loops and comparisons: `kc find -w` pays for this on
    /// every call when the file exists, and String's Unicode-aware operations, or a generic
    /// type with a protocol requirement (a `ClosedRange`), would make the runtime look up
    /// conformances, which costs more than the rest of its start-up (docs/performance.md).
    /// - Throws: errSecParam, the message starting `PATH:LINE:`, for the first line that is
    ///   not text, has no `=`, names an unknown key or one given before, or has a value the
    ///   key does not take. The message says what was expected and never quotes the line
    ///   (at most a key's name): a file put at the path by someone else could be one that
    ///   holds a secret (~/.git-credentials), and stderr may be a CI log.
    public static func parse(_ bytes: [UInt8], path: String) throws -> ConfigFile {
        var file = ConfigFile(path: path, exists: true)
        // The line each key was given on (0: not given).
        var given = [Int](repeating: 0, count: keys.count)
        var number = 0
        // A UTF-8 byte-order mark, as some editors write: not part of the first key.
        var start = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
        while start < bytes.count {
            number += 1
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            defer { start = end + 1 }
            func fail(_ message: String, hint: String? = nil) -> KeychainError {
                KeychainError(
                    errSecParam, "\(path):\(number): \(message)", hint: hint ?? "`kc config --help` and docs/config.md list the keys and their values")
            }
            guard isText(bytes, start, end) else { throw fail("not UTF-8 text") }
            let (lo, hi) = trimmed(bytes, start, end)
            if lo == hi || bytes[lo] == 0x23 { continue }   // blank, or `#`
            if bytes[lo] == 0x5B { throw fail("sections are not used: write KEY = VALUE lines only") }   // `[`
            var equals = lo
            while equals < hi && bytes[equals] != 0x3D { equals += 1 }
            guard equals < hi else { throw fail("expected KEY = VALUE; this line has no =") }
            let (keyLo, keyHi) = trimmed(bytes, lo, equals)
            let key = text(bytes, keyLo, keyHi)
            var index = 0
            while index < keys.count && keys[index] != key { index += 1 }
            guard index < keys.count else {
                let dashed = String(key.lowercased().map { $0 == "_" ? "-" : $0 })
                let hint = keys.contains(dashed) ? "did you mean \(dashed)?" : "the keys are " + keys.joined(separator: ", ")
                // Named only when it looks like a key (a .env file's NAME), never what may be a
                // URL with a token in it.
                throw fail(looksLikeKey(key) ? "unknown key \"\(key)\"" : "unknown key (not a word of letters, digits, - and _)", hint: hint)
            }
            if given[index] != 0 { throw fail("\(key) is given twice (lines \(given[index]) and \(number))", hint: "keep one of them") }
            given[index] = number
            let (valueLo, valueHi) = trimmed(bytes, equals + 1, commentStart(bytes, equals + 1, hi))
            guard valueLo < valueHi else { throw fail("\(key) has no value") }
            do {
                try file.set(key, text(bytes, valueLo, valueHi), line: number)
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
            guard let seconds = UInt64(value), seconds >= 1, seconds <= Keychain.maxTimeout else {
                throw KeychainError(errSecParam, "\(key) is not whole seconds, 1 to \(Keychain.maxTimeout) (a year)")
            }
            if key == "idle-timeout" { idleTimeout = Entry(value: seconds, line: line) } else { maxTimeout = Entry(value: seconds, line: line) }
        case "unlock-on-prompt":
            guard let on = Self.boolean(value) else {
                throw KeychainError(errSecParam, "unlock-on-prompt is not yes or no (true/false, on/off, 1/0)")
            }
            unlockOnPrompt = Entry(value: on, line: line)
        case "clip-seconds":
            guard let seconds = Int(value), seconds >= 1, seconds <= Self.maxClipSeconds else {
                throw KeychainError(errSecParam, "clip-seconds is not whole seconds, 1 to \(Self.maxClipSeconds) (a day)")
            }
            clipSeconds = Entry(value: seconds, line: line)
        case "kdf":
            guard let profile = KDFProfile(rawValue: value) else {
                throw KeychainError(errSecParam, "kdf is not interactive, moderate or sensitive")
            }
            kdf = Entry(value: profile, line: line)
        case "team":
            let name = value.hasPrefix(KeychainAddress.teamPrefix) ? String(value.dropFirst(KeychainAddress.teamPrefix.count)) : value
            guard let address = try? KeychainAddress(teamName: name), case .team(let checked) = address else {
                throw KeychainError(
                    errSecParam, "team is not a team name: 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit",
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
        guard let address = try? KeychainAddress(word) else {
            throw KeychainError(
                errSecParam, "keychain is not a NAME, an absolute path or team:NAME", hint: "it takes what -k takes (kc --help)")
        }
        if case .file = address, KeychainLocation.isPath(word), !word.hasPrefix("/") {
            throw KeychainError(
                errSecParam, "keychain is a relative path, which would change with the working folder",
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

    /// Whether `key` is 1 to 32 ASCII letters, digits, `-` and `_`: a name that may be
    /// quoted back.
    static func looksLikeKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.count <= 32 else { return false }
        for byte in utf8 {
            let letter = (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
            guard letter || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F else { return false }
        }
        return true
    }

    /// `bytes[lo..<hi]` without the spaces, tabs and carriage returns around it.
    static func trimmed(_ bytes: [UInt8], _ lo: Int, _ hi: Int) -> (Int, Int) {
        var lo = lo
        var hi = hi
        while lo < hi && (bytes[lo] == 0x20 || bytes[lo] == 0x09 || bytes[lo] == 0x0D) { lo += 1 }
        while hi > lo && (bytes[hi - 1] == 0x20 || bytes[hi - 1] == 0x09 || bytes[hi - 1] == 0x0D) { hi -= 1 }
        return (lo, hi)
    }

    /// Where a value's trailing comment starts in `bytes[lo..<hi]` (`hi` when it has none):
    /// at the first `#` that starts the value or follows a space or a tab
    /// (`600  # ten minutes`); a `#` inside a word stays (`a#b`).
    static func commentStart(_ bytes: [UInt8], _ lo: Int, _ hi: Int) -> Int {
        var index = lo
        while index < hi {
            if bytes[index] == 0x23 && (index == lo || bytes[index - 1] == 0x20 || bytes[index - 1] == 0x09) { return index }
            index += 1
        }
        return hi
    }

    /// Whether `bytes[lo..<hi]` is UTF-8 text without NUL: no overlong form, no surrogate,
    /// nothing past U+10FFFF (as `String(validating:)` checks, without its generic cost).
    static func isText(_ bytes: [UInt8], _ lo: Int, _ hi: Int) -> Bool {
        var i = lo
        while i < hi {
            let lead = bytes[i]
            if lead == 0 { return false }
            if lead < 0x80 {
                i += 1
                continue
            }
            var scalar: UInt32
            let following: Int
            let minimum: UInt32
            if lead & 0xE0 == 0xC0 {
                (scalar, following, minimum) = (UInt32(lead & 0x1F), 1, 0x80)
            } else if lead & 0xF0 == 0xE0 {
                (scalar, following, minimum) = (UInt32(lead & 0x0F), 2, 0x800)
            } else if lead & 0xF8 == 0xF0 {
                (scalar, following, minimum) = (UInt32(lead & 0x07), 3, 0x10000)
            } else {
                return false
            }
            guard i + following < hi else { return false }
            var k = 1
            while k <= following {
                let next = bytes[i + k]
                guard next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
                k += 1
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, scalar < 0xD800 || scalar > 0xDFFF else { return false }
            i += following + 1
        }
        return true
    }

    /// `bytes[lo..<hi]` as text (checked as UTF-8 before).
    static func text(_ bytes: [UInt8], _ lo: Int, _ hi: Int) -> String {
        String(decoding: bytes[lo..<hi], as: UTF8.self)
    }
}
