import ArgumentParser

/// kc's command line as every parser reads it: `KC.main` runs `normalised` once, and the
/// fast parsers (`Read.fast`, `RunFastPath`, `FindFastPath`), the credential helpers and
/// ArgumentParser all parse its output.
///
/// One pass over the words, from the table (`Options`), makes four rewrites, each because
/// ArgumentParser cannot read the form users and scripts write:
///
/// 1. **Keychain options before the subcommand** move after it: `kc -k work backup DEST`
///    is `kc backup -k work DEST`. Every subcommand declares `-k` and the password options
///    itself (ArgumentParser has no options shared across subcommands), yet docs and habit
///    (macOS `security`, `git -C`) put them first. A keychain chosen twice, on either
///    side or both, is refused (`refusingASecondKeychain`).
/// 2. **An option given without its value** gets the value meant (`OptionSpec.omitted`):
///    `--clip` alone is `--clip=45`, or the configuration file's `clip-seconds`
///    (unless a number follows, `--clip 10`), and
///    `kc add --generate` is `--generate=default`. ArgumentParser has no option whose value
///    may be left out, and refuses an empty one.
/// 3. **A value spelled `--`** is attached: `-s --` is `-s=--`. Every value-taking option
///    takes the next word unconditionally (`kc find -s -x`, `-s -`), as getopt-based tools
///    such as macOS `security` do (issue 15, item 13); ArgumentParser's `.unconditional`
///    does that for every word but `--`, at which it splits the command line before parsing.
/// 4. **A value attached to a short option** is split off, as getopt reads it:
///    `-sgithub.com` is `-s github.com`, `-wkwork` is `-w -k work` (issue 32).
///    ArgumentParser would read `-sgithub.com` as a group of one-letter flags. `-s=x`
///    (ArgumentParser's own form) and grouped flags (`-wg`, `-wk`) stay as they are.
///
/// A word that is another option's value is never rewritten (`-s --clip` is a service),
/// and nothing after the `--` that ends the options is. The command line is returned as it
/// is when it has no leading option, no `--`, no one-dash word longer than a flag and no
/// option whose value may be left out: the common `kc find -s x -w` costs a scan of its
/// words and a look at find's list, which its fast parser reads next anyway; `kc read REF`
/// reads no table at all.
/// The credential helpers (`kc git-credential`, `kc docker-credential`) get only the first
/// rewrite: they read their own few options (`HelperInput.options`).
enum ArgumentNormaliser {
    /// The credential helpers' subcommands, which read their own few options
    /// (`HelperInput.options`, `-kNAME` included): only the first rewrite is made for them.
    static let helpers: Set<String> = ["git-credential", "docker-credential", KubeCredentialHelper.word]

    /// - Parameter arguments: the whole command line, the program's name first.
    /// - Returns: the command line with the four rewrites made.
    /// - Throws: a usage error when keychain options lead and no subcommand follows them,
    ///   when they are given on both sides of the subcommand, or when a password option
    ///   leads a credential helper.
    static func normalised(_ arguments: [String]) throws -> [String] {
        guard let program = arguments.first else { return arguments }
        var arguments = arguments
        if arguments.count > 1, arguments[1].hasPrefix("-") {
            arguments = try [program] + movingLeadingOptions(arguments.dropFirst())
        }
        guard arguments.count > 2 else { return arguments }
        let command = arguments[1]
        if helpers.contains(command) {
            try refusingASecondKeychain(arguments, of: command)
            return arguments
        }
        let out = attachingValues(arguments, of: command)
        try refusingASecondKeychain(out, of: command)
        return out
    }

    /// Refuses a command line that chooses the keychain twice, however spelled (`-k`,
    /// `--keychain`, `-k=x`, `--keychain=x`, grouped as `-wk x`), before or after the
    /// subcommand: ArgumentParser would let the last one win without a word, and `kc -k work
    /// update -k=personal …` would write to the keychain the alias did not name. A word
    /// that is an option's value (`-s -k`) and the words after the `--` that ends the
    /// options are not options. A command line with at most one word that could choose a
    /// keychain (every common one) costs one look at each word.
    private static func refusingASecondKeychain(_ arguments: [String], of command: String) throws {
        var candidates = 0
        for word in arguments.dropFirst(2) where word.hasPrefix("-") && (word.hasPrefix("--k") || !word.hasPrefix("--") && word.contains("k")) {
            candidates += 1
        }
        guard candidates > 1 else { return }
        var given = 0
        var i = 2
        while i < arguments.count {
            let word = arguments[i]
            i += 1
            if word == "--" { break }
            guard word.hasPrefix("-"), word.count > 1 else { continue }
            let (name, attached) = OptionSpec.split(word)
            var last = name
            if !word.hasPrefix("--"), attached == nil, name.count > 2 {
                // Short flags grouped in one word (`-wk`): each letter is an option, and the
                // last one may take the next word as its value.
                for letter in name.dropFirst() where Options.keychain.isNamed("-\(letter)"[...]) { given += 1 }
                last = "-\(name.last ?? "-")"[...]
            } else if Options.keychain.isNamed(name) {
                given += 1
            }
            if attached == nil, Options.takesValue(last, in: command) { i += 1 }
        }
        if given > 1 {
            throw ValidationError("-k/--keychain is given twice; give one (the keychain is chosen once, before or after '\(command)')")
        }
    }

    /// The arguments (after `kc`) with the leading keychain options moved after the
    /// subcommand; the same arguments when none leads.
    private static func movingLeadingOptions(_ arguments: ArraySlice<String>) throws -> [String] {
        var leading: [String] = []
        var rest = arguments
        while let word = rest.first {
            // `--keychain=x` and `-kx` (getopt's form) lead as one word; `-k=x` does not lead.
            let attachedShort = !word.hasPrefix("--") && word.utf8.count > 2 && !word.dropFirst(2).hasPrefix("=")
            let name = word.hasPrefix("--") ? word.prefix { $0 != "=" } : attachedShort ? word.prefix(2) : word[...]
            guard let option = Options.keychainGroup.first(where: { $0.isNamed(name) }) else { break }
            let whole = name.count == word.count
            if option.takesValue && whole {
                guard rest.count >= 2 else { throw ValidationError("Missing value for '\(word)'") }
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if option.takesValue || whole {
                leading.append(word)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return Array(arguments) }
        guard let subcommand = rest.first, !subcommand.hasPrefix("-") else {
            throw ValidationError(
                "\(leading.joined(separator: " ")) chooses the keychain of a command; give the command after it, as in `kc \(leading.joined(separator: " ")) find --all`"
            )
        }
        let passwordGiven = leading.contains { $0.hasPrefix("--password") }
        // The credential helpers read git's or Docker's protocol on stdin and never take a
        // keychain password (the keychain must be unlocked): say so rather than ignore it.
        if passwordGiven && (subcommand == "git-credential" || subcommand == "docker-credential") {
            throw ValidationError("\(subcommand) takes no keychain password; unlock the keychain with `kc unlock` first")
        }
        return [subcommand] + leading + rest.dropFirst()
    }

    /// The command line with rewrites 2 to 4 made for the options of `command`.
    private static func attachingValues(_ arguments: [String], of command: String) -> [String] {
        let words = arguments[2...]
        // A `--`, or a one-dash word longer than a flag (`-sVALUE`, `-wk`, `-s=x`), needs the
        // pass below; `kc find -s x -w` does not.
        var needed = false
        var dashed = false
        for word in words where word.hasPrefix("-") {
            dashed = true
            if word == "--" || !word.hasPrefix("--") && word.utf8.count > 2 {
                needed = true
                break
            }
        }
        // An option is a word with a dash (`kc read REF` has none and reads no table).
        if !needed, dashed {
            for option in Options.of(command) where option.omitted != nil {
                if words.contains(where: { option.isNamed($0[...]) }) { needed = true }
            }
        }
        guard needed else { return arguments }
        var out = Array(arguments.prefix(2))
        var i = 2
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" {
                out += arguments[i...]
                break
            }
            guard word.hasPrefix("-") else {
                out.append(word)
                i += 1
                continue
            }
            if let option = Options.named(word[...], in: command), let omitted = option.omitted {
                let next = i + 1 < arguments.count ? arguments[i + 1] : ""
                if omitted.numberFollowing, !next.isEmpty, next.allSatisfy({ $0.isASCII && $0.isNumber }) {
                    out += [word, next]
                    i += 2
                } else {
                    // `--clip` alone: the configuration file's clip-seconds, else 45.
                    out.append(word + "=" + (option === Options.clip ? String(Configuration.clipSeconds) : omitted.value))
                    i += 1
                }
                continue
            }
            if let split = splittingAttachedValue(word, next: i + 1 < arguments.count ? arguments[i + 1] : nil, of: command) {
                out += split.words
                i += split.consumed
                continue
            }
            if Options.takesValue(word[...], in: command), i + 1 < arguments.count {
                let value = arguments[i + 1]
                out += value == "--" ? [word + "=--"] : [word, value]
                i += 2
                continue
            }
            out.append(word)
            i += 1
        }
        return out
    }

    /// A value attached to a short option, as getopt reads it: `-sgithub.com` is `-s
    /// github.com`, `-wkwork` (flags first) is `-w -k work`, `-P-1` is `-P -1`; a value
    /// `--` is attached as rewrite 3 does (`-s=--`). Grouped flags that end with an option
    /// taking a value (`-Uw`, `-wk`) take the next word as it is, whatever it looks like
    /// (`-Uw -pSECRET` stores `-pSECRET`, as ArgumentParser reads it), written out as
    /// separate words (`-U -w -pSECRET`) so that no later look splits that value. Nil for
    /// anything else: `-s` alone, `-s=x` (ArgumentParser's own form), flags only (`-wg`), a
    /// letter that is no option of `command` (`-1`, `-x`), a long option.
    /// - Returns: the words to write and how many words of the command line they stand for.
    private static func splittingAttachedValue(_ word: String, next: String?, of command: String) -> (words: [String], consumed: Int)? {
        guard word.hasPrefix("-"), !word.hasPrefix("--") else { return nil }
        let letters = Array(word.dropFirst())
        guard letters.count > 1, letters[1] != "=" else { return nil }
        var flags: [String] = []
        for (index, letter) in letters.enumerated() {
            guard let option = Options.named("-\(letter)"[...], in: command), option.short != nil else { return nil }
            let name = "-\(letter)"
            guard option.takesValue else {
                flags.append(name)
                continue
            }
            let value = String(letters[(index + 1)...])
            if value.isEmpty {
                // `-Uw VALUE`: the next word is the value, untouched.
                guard let next else { return nil }
                return (flags + (next == "--" ? [name + "=--"] : [name, next]), 2)
            }
            guard !value.hasPrefix("=") else { return nil }
            return (flags + (value == "--" ? [name + "=--"] : [name, value]), 1)
        }
        return nil
    }
}
