import ArgumentParser

/// A mistyped subcommand (`kc ad -s x`, `kc rm -s x`) is named as such, with the command
/// meant (`CommandSynonyms`: `rm` is delete) or else the nearest one, instead of
/// ArgumentParser's "Unknown option '-s'" about what follows it.
enum CommandSuggestion {
    /// The subcommand names kc knows (hidden ones included), and `help`.
    static var known: [String] { KC.configuration.subcommands.map { $0._commandName } + ["help"] }

    /// The message for `word` in the subcommand's place, or nil when it is a command, an
    /// option, or nothing.
    static func message(for word: String) -> String? {
        guard !word.isEmpty, !word.hasPrefix("-"), !known.contains(word) else { return nil }
        var message = "kc: unknown command '\(word)'"
        // By meaning first (`rm` is delete, not run), then by spelling.
        if let suggestions = CommandSynonyms.suggestions(for: word) {
            message += "; " + CommandSynonyms.advice(suggestions)
        } else if let near = nearest(word) {
            message += "; did you mean '\(near)'?"
        }
        return message + " (kc --help lists the commands)"
    }

    /// The known command within two edits of `word` (or that starts with it), if any.
    static func nearest(_ word: String) -> String? {
        let candidates = known.filter { $0 != "help" }
        if let prefixed = candidates.first(where: { $0.hasPrefix(word) && word.count >= 2 }) { return prefixed }
        let scored = candidates.map { ($0, distance(Array(word), Array($0))) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
