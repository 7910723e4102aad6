import KeychainCore

/// Dotenv files for `kc run --env-file` and values for `kc inject --format dotenv`:
/// `[export ]NAME=VALUE` lines; `#` comments and blank lines; VALUE bare (trailing ` #…`
/// is a comment), in single quotes (literal) or double quotes (`\n`, `\"`, `\\`).
enum DotEnv {
    /// The (name, value) pairs of a file's text. - Throws: errSecParam naming file and line.
    static func parse(_ text: String, file: String) throws -> [(String, String)] {
        var out: [(String, String)] = []
        // Lines by bytes: "\r\n" is one Character in Swift, so a CRLF file would be one line.
        let lines = Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false)
        for (index, rawBytes) in lines.enumerated() {
            let raw = String(decoding: rawBytes.last == 0x0D ? rawBytes.dropLast() : rawBytes[...], as: UTF8.self)
            var line = Substring(raw.trimmingSpaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst(7).drop { $0 == " " } }
            let bad = { (why: String) in KeychainError(errSecParam, "\(file):\(index + 1): \(why)") }
            guard let eq = line.firstIndex(of: "=") else { throw bad("not NAME=VALUE") }
            let name = String(line[..<eq]).trimmingSpaces
            guard isName(name) else { throw bad("\"\(name)\" is not a variable name") }
            var value = Substring(String(line[line.index(after: eq)...]).trimmingSpaces)
            if value.hasPrefix("'") {
                guard value.count >= 2, let close = value.dropFirst().firstIndex(of: "'") else { throw bad("a single quote that does not close") }
                let rest = String(value[value.index(after: close)...]).trimmingSpaces
                guard rest.isEmpty || rest.hasPrefix("#") else { throw bad("text after the closing quote") }
                value = value[value.index(after: value.startIndex)..<close]
                out.append((name, String(value)))
            } else if value.hasPrefix("\"") {
                var result = ""
                var i = value.index(after: value.startIndex)
                var closed = false
                while i < value.endIndex {
                    let c = value[i]
                    if c == "\\" {
                        let n = value.index(after: i)
                        guard n < value.endIndex else { break }
                        switch value[n] {
                        case "n": result.append("\n")
                        case "t": result.append("\t")
                        default: result.append(value[n])
                        }
                        i = value.index(after: n)
                        continue
                    }
                    if c == "\"" {
                        closed = true
                        let rest = String(value[value.index(after: i)...]).trimmingSpaces
                        guard rest.isEmpty || rest.hasPrefix("#") else { throw bad("text after the closing quote") }
                        break
                    }
                    result.append(c)
                    i = value.index(after: i)
                }
                guard closed else { throw bad("a double quote that does not close") }
                out.append((name, result))
            } else {
                if let hash = value.firstRange(of: " #") { value = value[..<hash.lowerBound] }
                out.append((name, String(value).trimmingSpaces))
            }
        }
        return out
    }

    static func isName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return s.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// A value as a dotenv consumer reads it back unchanged: bare when it is plain, in single
    /// quotes when it has spaces, `$`, `"` or `#`. Nil when no form is safe in every
    /// consumer: a line end, a single quote or a backslash (readers disagree on escapes in
    /// quotes), or another control character.
    static func quoted(_ value: String) -> String? {
        // Bytes, not Characters: "\r\n" is one Character and matches neither "\r" nor "\n".
        if value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\\") }) { return nil }
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy { s in
                s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || "_-.,:/@+=%^*~".unicodeScalars.contains(s))
            }
        return plain ? value : "'\(value)'"
    }
}
