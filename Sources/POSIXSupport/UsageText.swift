/// swift-argument-parser's texts in kc's form, shared by kc and kc-team: a help's usage
/// wrapped to fit the screen (at most 80 columns), and a usage error said as kc says every
/// error, `PROGRAM: message` then `PROGRAM: hint: …`, instead of `Error: …` / `Usage: …`.
/// Pure text: the caller gets the texts from ArgumentParser (`fullMessage(for:)`,
/// `message(for:)`) and prints the result.
package enum UsageText {
    /// The widest a usage line gets, whatever the terminal: past it, a usage is wrapped.
    package static let maximumWidth = 80

    /// `help` (ArgumentParser's rendering of `--help`) with its `USAGE:` paragraph wrapped
    /// to `min(width, 80)` columns, each continuation line under the first option; any
    /// other text (a version, a completion script) comes back unchanged.
    package static func wrappingUsage(in help: String, width: Int) -> String {
        guard help.hasPrefix("OVERVIEW: ") || help.hasPrefix("USAGE: ") else { return help }
        var lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("USAGE: ") }) else { return help }
        // The paragraph: the USAGE line and its continuation lines, up to the blank line.
        var end = start + 1
        while end < lines.count, !lines[end].isEmpty { end += 1 }
        let usage = lines[start..<end].map { $0.trimmingSpaces }.joined(separator: " ")
        lines.replaceSubrange(start..<end, with: wrapped(String(usage.dropFirst("USAGE: ".count)), label: "USAGE: ", width: width))
        return lines.joined(separator: "\n")
    }

    /// `usage` ("kc find [-s <service>] [-a <account>] …") after `label`, as lines of at most
    /// `min(width, 80)` columns. It breaks only between the top-level words, never inside
    /// brackets or angle brackets, so `[-s <service>]` stays whole; continuation lines start
    /// under the first option (or 4 columns in, when the command's name is long).
    package static func wrapped(_ usage: String, label: String, width: Int) -> [String] {
        let limit = max(40, min(width, maximumWidth))
        let words = topLevelWords(usage)
        // The command's own words: those before the first option or argument.
        let commandWords = words.prefix { !$0.hasPrefix("[") && !$0.hasPrefix("<") && !$0.hasPrefix("-") }
        let commandWidth = label.count + commandWords.reduce(0) { $0 + $1.count + 1 }
        let indent = String(repeating: " ", count: commandWidth <= limit / 2 ? commandWidth : label.count + 4)
        var lines: [String] = []
        var line = label
        var lineHasWord = false
        for (i, word) in words.enumerated() {
            let first = i < commandWords.count
            if lineHasWord, !first, line.count + 1 + word.count > limit {
                lines.append(line)
                line = indent + word
            } else {
                line += (lineHasWord ? " " : "") + word
            }
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }

    /// The words of `usage` split at spaces outside any `[…]`, `<…>` or `(…)`.
    static func topLevelWords(_ usage: String) -> [String] {
        var words: [String] = []
        var word = ""
        var depth = 0
        for character in usage {
            switch character {
            case "[", "<", "(": depth += 1
            case "]", ">", ")": depth = max(0, depth - 1)
            default: break
            }
            if character == " ", depth == 0 {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// A usage error in kc's voice. `full` is ArgumentParser's whole text for it
    /// (`Error: MESSAGE`, maybe `Help:  OPTION'S HELP`, `Usage: …`, `  See 'kc find --help'
    /// for more information.`), `message` its message alone. The result: each line of the
    /// message as `PROGRAM: message` (its first word lower-cased, as kc's messages are),
    /// the option's help as `PROGRAM: hint: …`, and where to read the usage as
    /// `PROGRAM: hint: see 'kc find --help' for more information` (the usage itself is
    /// what `--help` shows). Lines joined by newlines, none at the end. The argv words
    /// (`arguments`) ArgumentParser quotes are escaped first (`TerminalSafe.escapingArguments`),
    /// so a newline inside one cannot start a line of its own; other control characters
    /// are the caller's to escape.
    package static func voiced(_ full: String, message: String, program: String, arguments: [String]) -> String {
        let full = TerminalSafe.escapingArguments(full, arguments: arguments)
        let message = TerminalSafe.escapingArguments(message, arguments: arguments)
        var out: [String] = []
        let messageLines = message.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        for (i, line) in messageLines.enumerated() {
            out.append("\(program): \(i == 0 ? lowerFirstWord(line) : line)")
        }
        for line in full.split(separator: "\n").map(String.init) {
            if line.hasPrefix("Help:") {
                let help = line.dropFirst("Help:".count).trimmingSpaces
                if !help.isEmpty { out.append("\(program): hint: \(help)") }
            } else if line.trimmingSpaces.hasPrefix("See '") {
                out.append("\(program): hint: see\(line.trimmingSpaces.dropFirst("See".count))")
            }
        }
        if out.isEmpty, !full.trimmingSpaces.isEmpty { out.append("\(program): \(lowerFirstWord(full.trimmingSpaces))") }
        return out.joined(separator: "\n")
    }

    /// "Missing value…" as "missing value…"; a word in capitals ("KC_PASSWORD", "URL")
    /// or already lower-case stays as it is.
    static func lowerFirstWord(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars.prefix(2))
        guard scalars.count == 2, scalars[0].properties.isUppercase, scalars[1].properties.isLowercase else { return text }
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

extension StringProtocol {
    /// The text without spaces at either end.
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
