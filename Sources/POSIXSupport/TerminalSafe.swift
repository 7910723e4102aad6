/// Text and bytes made safe for a terminal: every character a terminal may act on rather
/// than show is written as a visible escape. The one function for every byte kc, kc-team
/// and kc-secret-service write to a terminal that may carry data from outside the program:
/// messages quoting argv, a file, an import or a server; item attributes; prompts (the
/// presence prompt names an item whose label may come from an import); and, on a
/// terminal, a secret's own bytes (`kc find -w`, `kc read`). See docs/security.md,
/// "What reaches your terminal".
///
/// What is escaped (`isControl`):
/// - C0 (U+0000–U+001F), so no `ESC` sequence survives, nor a carriage return that
///   overwrites a line, nor a line end that forges a second `kc: …` line;
/// - DEL (U+007F) and C1 (U+0080–U+009F), which some terminals obey as controls (`U+009B`
///   is CSI, `U+009D` is OSC);
/// - the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E,
///   U+2066–U+2069), which reorder what follows them on the screen, so a label could show
///   as another ("Trojan Source"); and U+2028 / U+2029, line and paragraph separators;
/// - in bytes that are not UTF-8 (`escaped(bytes:)`), every byte outside a valid sequence,
///   raw 0x80–0x9F included (a terminal in an 8-bit mode obeys them as C1).
///
/// Escapes are JSON's: `\n`, `\r`, `\t`, `\uXXXX`; a byte outside UTF-8 is `\xNN`.
///
///     TerminalSafe.escaped("a\u{1B}]0;x\u{07}b")   // "a\u001b]0;x\u0007b"
package enum TerminalSafe {
    /// How much is escaped besides the controls.
    package struct Style: Sendable, Equatable {
        /// U+000A stays a line end (messages whose line structure is kc's own).
        package var keepsNewlines = false
        /// U+0009 stays a tab (a secret shown on a terminal).
        package var keepsTabs = false
        /// `\` is written `\\`, so the output can be read back exactly (a secret shown on a
        /// terminal; JSON strings).
        package var escapesBackslash = false
        /// `"` is written `\"` (JSON strings).
        package var escapesQuote = false

        /// A one-line message: every control escaped, backslashes as they are.
        package static let message = Style()
        /// A message of several lines that are the program's own.
        package static let lines = Style(keepsNewlines: true)
        /// A secret shown on a terminal: line ends and tabs kept, everything else escaped,
        /// backslashes doubled so the escaped text maps back to one byte string.
        package static let secret = Style(keepsNewlines: true, keepsTabs: true, escapesBackslash: true)
        /// The inside of a JSON string (RFC 8259 §7), with the same controls escaped.
        package static let json = Style(escapesBackslash: true, escapesQuote: true)
    }

    /// Whether a terminal may act on `scalar` rather than show it (see the type's summary).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Whether `text` has a character `isControl` escapes.
    package static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// `text` with each control character escaped (`\n`, `\r`, `\t`, `\uXXXX`), and, in
    /// the `.json` and `.secret` styles, `\` (and `"`) too.
    package static func escaped(_ text: String, _ style: Style = .message) -> String {
        var utf8 = text
        let changed: [UInt8]? = utf8.withUTF8 { needsEscaping($0, style) ? escaped($0, style) : nil }
        return changed.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// Whether `bytes` would change under `escaped(bytes:_:)`.
    package static func needsEscaping(_ bytes: [UInt8], _ style: Style = .secret) -> Bool {
        bytes.withUnsafeBufferPointer { needsEscaping($0, style) }
    }

    /// Whether `bytes` would change under `escaped(raw:_:)`.
    package static func needsEscaping(raw bytes: UnsafeRawBufferPointer, _ style: Style = .secret) -> Bool {
        bytes.withMemoryRebound(to: UInt8.self) { needsEscaping($0, style) }
    }

    /// `bytes` with every control character escaped and every byte outside valid UTF-8
    /// written `\xNN`: the one escaping of text for a terminal (`escaped(_:_:)` is this on
    /// a String's UTF-8).
    package static func escaped(bytes: [UInt8], _ style: Style = .secret) -> [UInt8] {
        bytes.withUnsafeBufferPointer { escaped($0, style) }
    }

    /// `escaped(bytes:_:)` on bytes in place (a secret, which is not copied first).
    package static func escaped(raw bytes: UnsafeRawBufferPointer, _ style: Style = .secret) -> [UInt8] {
        bytes.withMemoryRebound(to: UInt8.self) { escaped($0, style) }
    }

    private static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>, _ style: Style) -> Bool {
        var plain = true
        for byte in bytes {
            switch byte {
            case 0x20...0x7E:
                if (byte == 0x5C && style.escapesBackslash) || (byte == 0x22 && style.escapesQuote) { return true }
            case 0x0A where style.keepsNewlines, 0x09 where style.keepsTabs: continue
            case 0x80...0xFF: plain = false
            default: return true
            }
        }
        if plain { return false }
        // Non-ASCII: decode to look for C1, bidi controls and bytes outside UTF-8.
        var found = false
        walk(bytes, style) { piece in if case .escape = piece { found = true } }
        return found
    }

    private static func escaped(_ bytes: UnsafeBufferPointer<UInt8>, _ style: Style) -> [UInt8] {
        var out: [UInt8] = []
        // Room for the worst case (every byte `\xNN`), so no partial copy of a secret is
        // left behind in a buffer outgrown.
        out.reserveCapacity(bytes.count * 4)
        walk(bytes, style) { piece in
            switch piece {
            case .copy(let range): out.append(contentsOf: bytes[range])
            case .escape(let text): out.append(contentsOf: text.utf8)
            }
        }
        return out
    }

    /// A usage error from ArgumentParser: its lines are the program's own, but it quotes
    /// argv words (an unknown option, an invalid value) and validation messages quote option
    /// values. Each argv word with a control character, and the value after its first `=`,
    /// is escaped whole (newlines too) wherever it appears; then every other control
    /// character but the line ends.
    package static func usageMessage(_ text: String, arguments: [String]) -> String {
        escaped(escapingArguments(text, arguments: arguments), .lines)
    }

    /// `text` with each argv word that holds a control character, and the value after its
    /// first `=`, escaped whole (newlines too) wherever it appears; the rest unchanged. Done
    /// before a message is cut into lines (`UsageText.voiced`), so that a newline inside a
    /// word is escaped rather than taken for the end of a line.
    package static func escapingArguments(_ text: String, arguments: [String]) -> String {
        var candidates: [String] = []
        for argument in arguments where hasControl(argument) {
            candidates.append(argument)
            if let eq = argument.firstIndex(of: "=") { candidates.append(String(argument[argument.index(after: eq)...])) }
        }
        var out = text
        // Longest first, so a word is escaped whole before any part of it is.
        for candidate in candidates.sorted(by: { $0.utf8.count > $1.utf8.count }) where !candidate.isEmpty {
            out = out.replacing(candidate, with: escaped(candidate))
        }
        return out
    }

    /// A run of input bytes kept as they are, or the escape written for one character or
    /// one byte outside UTF-8.
    private enum Piece {
        case copy(Range<Int>)
        case escape(String)
    }

    /// Decodes `bytes` as UTF-8 and hands each scalar (or invalid byte) to `emit`, as a
    /// range to copy or an escape to write.
    private static func walk(_ bytes: UnsafeBufferPointer<UInt8>, _ style: Style, _ emit: (Piece) -> Void) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var at = 0
        var copyFrom = 0
        func flush() { if copyFrom < at { emit(.copy(copyFrom..<at)) } }
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if let escape = escape(for: scalar, style) {
                    flush()
                    emit(.escape(escape))
                    at += encoded.count
                    copyFrom = at
                } else {
                    at += encoded.count
                }
            case .error(let length):
                flush()
                for byte in bytes[at..<(at + length)] { emit(.escape("\\x" + hex(byte, digits: 2))) }
                at += length
                copyFrom = at
            case .emptyInput:
                flush()
                return
            }
        }
    }

    /// The escape for `scalar` in `style`, or nil when it is written as it is.
    private static func escape(for scalar: Unicode.Scalar, _ style: Style) -> String? {
        switch scalar {
        case "\n": return style.keepsNewlines ? nil : "\\n"
        case "\t": return style.keepsTabs ? nil : "\\t"
        case "\r": return "\\r"
        case "\\": return style.escapesBackslash ? "\\\\" : nil
        case "\"": return style.escapesQuote ? "\\\"" : nil
        default: return isControl(scalar) ? "\\u" + hex(scalar.value, digits: 4) : nil
        }
    }

    private static func hex(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
