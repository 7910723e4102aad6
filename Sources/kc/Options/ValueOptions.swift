import KeychainCore
/// Which options take a value, so that a value spelled `--` stays a value.
///
/// Every value-taking option takes the next word unconditionally (`kc find -s -x`, `-s -`,
/// `-s --`), as getopt-based tools such as macOS `security` do (issue 15, item 13).
/// ArgumentParser's `.unconditional` parsing does that for every word but `--`: it splits
/// the command line at `--` before parsing, so the words after it can only be positional
/// arguments. `attachingDashDash` therefore rewrites `-s --` as `-s=--`, which
/// ArgumentParser reads as the same value, before it parses. FastPathTests checks this
/// table against ArgumentParser's own description of every subcommand.
enum ValueOptions {
    /// The names of kc's options that take a value, in every subcommand that has them.
    static let names: [String] = [
        "-k", "--keychain", "--password-file", "--new-password-file", "--allow-keychain", "--class",
        "-a", "--account", "-s", "--service", "-l", "--label", "-D", "--kind", "-j", "--comment",
        "-G", "--generic", "-c", "--creator", "-C", "--type", "-d", "--security-domain", "-p", "--path",
        "-P", "--port", "-r", "--protocol", "-t", "--auth-type", "--timeout", "--max", "--tag", "--limit",
        "--data-file", "--secret", "--kdf", "--new-label", "--new-kind", "--new-comment", "--new-account",
        "--new-service", "--format", "-o", "--output", "-i", "--input", "--env", "--env-file", "--to", "--prompt", "--clip",
        "--length", "--charset", "--require", "--exclude", "--words", "--separator", "--count", "--generate",
        "--accessible", "--new-accessible", "--team-token-file",
        // kc add --totp: the seed's parameters.
        "--algorithm", "--digits", "--period", "--counter",
    ]

    /// Whether `name` takes a value in `subcommand`. `-w` is the secret's value in `add` and
    /// `update`, and a flag (print only the secret) in `find`.
    static func takesValue(_ name: String, in subcommand: String) -> Bool {
        if name == "-w" { return subcommand == "add" || subcommand == "update" }
        return names.contains(name)
    }

    /// Options whose value may be left out, by subcommand, and the value meant then:
    /// `kc add --generate` alone means `--generate=default`, as ArgumentParser has no option
    /// with an optional value (and refuses an empty one).
    static let optionalValues: [String: [String: String]] = ["add": ["--generate": "default"]]

    /// The arguments (after `kc`) with each option of `optionalValues` given without `=`
    /// written `OPTION=VALUE`; a word that is another option's value (`-s --generate`) and
    /// everything after a `--` stay as they are.
    static func attachingOptionalValues(_ arguments: [String]) -> [String] {
        guard let subcommand = arguments.first, let optional = optionalValues[subcommand],
              arguments.contains(where: { optional[$0] != nil }) else { return arguments }
        var out = [subcommand]
        var i = 1
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" { return out + arguments[i...] }
            if let value = optional[word] {
                out.append(word + "=" + value)
            } else if takesValue(word, in: subcommand), i + 1 < arguments.count {
                out += [word, arguments[i + 1]]
                i += 1
            } else {
                out.append(word)
            }
            i += 1
        }
        return out
    }

    /// The arguments (after `kc`) with each `OPTION --` whose option takes a value written
    /// `OPTION=--`; everything else, and everything after a `--` that ends the options, as it is.
    static func attachingDashDash(_ arguments: [String]) -> [String] {
        guard let subcommand = arguments.first, arguments.contains("--") else { return arguments }
        var out = [subcommand]
        var i = 1
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" { return out + arguments[i...] }
            if takesValue(word, in: subcommand), i + 1 < arguments.count {
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
}
