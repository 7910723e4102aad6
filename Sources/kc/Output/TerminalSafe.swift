import KeychainCore
/// Text made safe for a terminal: every control character written as a visible escape.
///
/// Error messages carry input (an attribute name from an import file, a service from argv,
/// a reference from an env file). Raw, a C0 or C1 control character in them could retitle
/// the terminal (`ESC ] 0 ; … BEL`), clear it, move the cursor, or end the line and forge a
/// second `kc: …` line. This is the one place that renders such characters harmless, called
/// by every printer of messages (`Report.fail`, `Report.note`, the usage-error path in
/// `KC.main`, the credential helpers); see docs/security.md, "Issue 15, items 9–14".
///
///     TerminalSafe.escaped("a\u{1B}]0;x\u{07}b")   // "a\u001b]0;x\u0007b"
enum TerminalSafe {
    /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F): every scalar a terminal
    /// may act on rather than show. ESC is in C0, so no escape sequence survives.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `text` has a control character.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// `text` with each control character written as `\n`, `\r`, `\t` or `\uXXXX`, as JSON
    /// writes them. With `keepingNewlines`, U+000A stays a line end (for messages whose line
    /// structure is kc's own, such as ArgumentParser's usage errors).
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard hasControl(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar), !(keepingNewlines && scalar == "\n") else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    /// A usage error from ArgumentParser: its lines are kc's own, but it quotes argv words
    /// (an unknown option, an invalid value) and our validation messages quote option
    /// values. Each argv word with a control character, and the value after its first `=`,
    /// is escaped whole (newlines too) wherever it appears; then every other control
    /// character but the line ends.
    static func usageMessage(_ text: String, arguments: [String]) -> String {
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
        return escaped(out, keepingNewlines: true)
    }
}
