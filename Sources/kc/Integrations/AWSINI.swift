/// AWS's shared files read exactly as botocore 1.29 reads them (Debian's awscli and
/// boto3): Python 3.11's `configparser.RawConfigParser` with its defaults, then
/// `build_profile_map`. Lines break at `\r\n`, `\r` or `\n` (Python's universal newlines);
/// white space is what Python's `str.isspace` says (U+00A0, U+3000, U+001C… among it); a
/// line whose stripped text starts with `#` or `;` is a comment; `[NAME]` at the start of a
/// stripped line is a header whatever follows its last `]` (`[default] ; note` is
/// `default`); a line indented deeper than the option before it continues that option's
/// value, across blank and comment lines; any other line is `key = value` or `key: value`,
/// split at the first `=` or `:`, the key lower-cased. Anything else (a line before any
/// header, a line with neither, a section or key given twice) makes configparser, and so
/// awscli, fail: kc refuses such a file and changes nothing.
enum AWSINI {
    /// What configparser makes of one line.
    enum Kind: Equatable {
        /// Blank, or a full-line comment.
        case blank
        /// A section header, with the name configparser gives it (nothing trimmed inside).
        case header(String)
        /// `key = value`: the key lower-cased, the value stripped.
        case option(key: String, value: String)
        /// More of the value of the option before.
        case continuation
    }

    /// Python's `str.isspace`.
    static func isSpace(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x09...0x0D, 0x1C...0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// `text` as Python's `str.strip()` leaves it.
    static func strip(_ text: Substring) -> Substring {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return Substring(scalars[first...last])
    }

    /// The lines of `text`, each with its line break (`\r\n`, `\r` or `\n`; the last may
    /// have none).
    static func lines(_ text: String) -> [String] {
        var out: [String] = []
        var current = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let s = pending {
            pending = scalars.next()
            current.append(s)
            if s == "\n" || (s == "\r" && pending != "\n") {
                out.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { out.append(String(current)) }
        return out
    }

    /// A line without its line break.
    static func content(_ line: String) -> Substring {
        var t = line[...]
        if t.unicodeScalars.last == "\n" { t = Substring(t.unicodeScalars.dropLast()) }
        if t.unicodeScalars.last == "\r" { t = Substring(t.unicodeScalars.dropLast()) }
        return t
    }

    /// Each line's kind. - Throws: the number (from 1) and the reason of the first line
    /// configparser would refuse.
    static func classify(_ lines: [String]) throws(Refusal) -> [Kind] {
        var kinds: [Kind] = []
        var section: String?
        var inOption = false
        var indentLevel = 0
        var sections: Set<String> = []
        // configparser counts a key per section name: two [DEFAULT] headers are one section.
        var optionsBySection: [String: Set<String>] = [:]
        var options: Set<String> = []
        for (n, line) in lines.enumerated() {
            let text = content(line)
            let value = strip(text)
            if value.isEmpty || value.unicodeScalars.first == "#" || value.unicodeScalars.first == ";" {
                kinds.append(.blank)
                continue
            }
            let indent = text.unicodeScalars.prefix { isSpace($0) }.count
            if section != nil && inOption && indent > indentLevel {
                kinds.append(.continuation)
                continue
            }
            indentLevel = indent
            let scalars = value.unicodeScalars
            if scalars.first == "[", let close = scalars.lastIndex(of: "]"), scalars.distance(from: scalars.startIndex, to: close) >= 2 {
                let name = String(Substring(scalars[scalars.index(after: scalars.startIndex)..<close]))
                guard name == "DEFAULT" || sections.insert(name).inserted else { throw Refusal(line: n + 1, why: "the section [\(name)] is given twice") }
                if let section { optionsBySection[section] = options }
                section = name
                options = optionsBySection[name] ?? []
                inOption = false
                kinds.append(.header(name))
                continue
            }
            guard section != nil else { throw Refusal(line: n + 1, why: "it comes before any [section]") }
            guard let split = scalars.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw Refusal(line: n + 1, why: "it is neither a [section], a comment nor `key = value`")
            }
            let key = String(strip(Substring(scalars[..<split]))).lowercased()
            guard !key.isEmpty else { throw Refusal(line: n + 1, why: "it has no key before its `=`") }
            guard options.insert(key).inserted else { throw Refusal(line: n + 1, why: "the key \(key) is given twice in its section") }
            inOption = true
            kinds.append(.option(key: key, value: String(strip(Substring(scalars[scalars.index(after: split)...])))))
        }
        return kinds
    }

    /// Why configparser would refuse a file, and where.
    struct Refusal: Error {
        let line: Int
        let why: String
    }

    /// The profile a section of ~/.aws/config is (botocore's `build_profile_map`): `default`,
    /// or `profile NAME` split as `shlex.split` does (`[profile "prod"]`, `[profile  prod]`).
    /// Compared code point by code point, as Python compares (Swift's `hasPrefix` and `==`
    /// compare characters: `profile` + U+0301 was no `profile` prefix to kc, and botocore's).
    static func profile(ofConfigSection name: String) -> String? {
        if sameText(name, "default") { return "default" }
        guard name.unicodeScalars.starts(with: "profile".unicodeScalars), let parts = shlexSplit(name), parts.count == 2 else { return nil }
        return parts[1]
    }

    /// Whether two names are the same code points (Python's `==`), not merely canonically
    /// equivalent (Swift's).
    static func sameText(_ a: String, _ b: String) -> Bool { a.unicodeScalars.elementsEqual(b.unicodeScalars) }

    /// Python's `shlex.split(text)` (POSIX mode, no comments); nil where it raises
    /// (an unclosed quote, a backslash at the end).
    static func shlexSplit(_ text: String) -> [String]? {
        var words: [String] = []
        var word = String.UnicodeScalarView()
        var inWord = false
        var quote: Unicode.Scalar?
        var escaped = false
        // Code point by code point, as Python's shlex reads (a combining mark or a Prepend
        // character merges with its neighbour into one Swift Character).
        for c in text.unicodeScalars {
            if escaped {
                // Inside double quotes, Python's shlex lets a backslash escape only `\` and `"`.
                if quote == "\"" && c != "\\" && c != "\"" { word.append("\\") }
                word.append(c)
                escaped = false
                continue
            }
            if let q = quote {
                if c == q {
                    quote = nil
                } else if c == "\\" && q == "\"" {
                    escaped = true
                } else {
                    word.append(c)
                }
                continue
            }
            if c == " " || c == "\t" || c == "\r" || c == "\n" {
                if inWord { words.append(String(word)) }
                word = String.UnicodeScalarView()
                inWord = false
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == "\\" {
                escaped = true
                inWord = true
            } else {
                word.append(c)
                inWord = true
            }
        }
        guard quote == nil, !escaped else { return nil }
        if inWord { words.append(String(word)) }
        return words
    }
}
