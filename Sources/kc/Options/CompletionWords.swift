/// The command line as a shell completion script hands it to `kc ---completion`
/// (ArgumentParser's `completion: .custom`): every word as typed, quotes and backslashes
/// included, and the index of the word being completed.
struct CompletionWords {
    /// The words, `kc` first.
    var words: [String]
    /// The index of the word being completed: never read as another option's value.
    var index: Int

    /// The value given to the last of `names` on the line (`-k work`, `--keychain=work`,
    /// or bash's `--keychain = work`, since bash splits words at `=`), unquoted; nil when
    /// none is, or when that value is the word being completed. Stops at `--`: what
    /// follows is another command's.
    func value(of names: [String]) -> String? {
        var found: String?
        var i = 1
        while i < words.count, words[i] != "--" {
            let word = words[i]
            if names.contains(word), i != index {
                var at = i + 1
                if at < words.count, words[at] == "=" { at += 1 }
                if at < words.count, at != index { found = Self.unquoted(words[at]) }
                i = at + 1
                continue
            }
            if i != index, let name = names.first(where: { $0.hasPrefix("--") && word.hasPrefix($0 + "=") }) {
                found = Self.unquoted(String(word.dropFirst(name.count + 1)))
            }
            i += 1
        }
        return found
    }

    /// A word as the shell would pass it on: quotes removed, backslash escapes resolved
    /// (no expansion of any kind).
    static func unquoted(_ word: String) -> String {
        var out = ""
        var quote: Character?
        var escaped = false
        for c in word {
            if escaped {
                out.append(c)
                escaped = false
            } else if let q = quote {
                if c == q {
                    quote = nil
                } else if c == "\\" && q == "\"" {
                    escaped = true
                } else {
                    out.append(c)
                }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }
}
