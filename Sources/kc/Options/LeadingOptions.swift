import ArgumentParser

/// The keychain options written before the subcommand: `kc -k work backup DEST`.
///
/// Every subcommand declares `-k` and the password options itself (ArgumentParser has no
/// options shared across a command's subcommands), yet docs and habit (macOS `security`,
/// `git -C`) put them first. `moved` rewrites such a command line so that they follow the
/// subcommand, where its parser (ArgumentParser's or a fast path) finds them, with the
/// same meaning and the same messages as when they are written there.
enum LeadingOptions {
    /// The options that may come before the subcommand and take a value.
    static let withValue = ["-k", "--keychain", "--password-file"]
    /// The flags that may come before the subcommand.
    static let flags = ["--password-stdin"]

    /// The arguments (after `kc`) with the leading keychain options moved after the
    /// subcommand; the same arguments when none leads.
    /// - Throws: a usage error when keychain options lead and no subcommand follows them.
    static func moved(_ arguments: ArraySlice<String>) throws -> [String] {
        guard let first = arguments.first, first.hasPrefix("-") else { return Array(arguments) }
        var leading: [String] = []
        var rest = arguments
        while let word = rest.first {
            let name = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
            if withValue.contains(name) && name == word {
                guard rest.count >= 2 else { throw ValidationError("Missing value for '\(word)'") }
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if withValue.contains(name) || flags.contains(word) {
                leading.append(word)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return Array(arguments) }
        guard let subcommand = rest.first, !subcommand.hasPrefix("-") else {
            throw ValidationError("\(leading.joined(separator: " ")) chooses the keychain of a command; give the command after it, as in `kc \(leading.joined(separator: " ")) find --all`")
        }
        let keychainGiven = leading.contains { $0 == "-k" || $0 == "--keychain" || $0.hasPrefix("--keychain=") }
        let passwordGiven = leading.contains { $0.hasPrefix("--password") }
        // The credential helpers read git's or Docker's protocol on stdin and never take a
        // keychain password (the keychain must be unlocked): say so rather than ignore it.
        if passwordGiven && (subcommand == "git-credential" || subcommand == "docker-credential") {
            throw ValidationError("\(subcommand) takes no keychain password; unlock the keychain with `kc unlock` first")
        }
        // `kc -k work find -k personal …` (an alias with -k, then another): refuse rather
        // than let the last one win without a word.
        if keychainGiven {
            let after = Array(rest.dropFirst())
            for (i, word) in after.enumerated() {
                if word == "--" { break }
                let isKeychain = word == "-k" || word == "--keychain" || word.hasPrefix("--keychain=")
                let isValue = i > 0 && ValueOptions.takesValue(after[i - 1], in: subcommand)
                if isKeychain && !isValue {
                    throw ValidationError("-k/--keychain is given twice (before and after '\(subcommand)'); give one")
                }
            }
        }
        return [subcommand] + leading + rest.dropFirst()
    }
}
