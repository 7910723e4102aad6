import ArgumentParser

/// `--clip [SECONDS]`: copy the secret to the clipboard instead of printing it, and clear
/// it after SECONDS (45) if the clipboard still holds it (`Clipboard`).
///
/// A command that prints one secret takes it with `@OptionGroup var clip: ClipOptions`
/// and, where it would print, `if let seconds = clip.seconds { try Clipboard.copy(secret:
/// bytes, clearAfter: seconds) }`; its name goes in `commands`, so that a bare `--clip`
/// gets the default.
struct ClipOptions: ParsableArguments {
    /// The seconds given (`--clip=45` when only `--clip` was: `normalized`).
    @Option(name: .customLong("clip"), parsing: .unconditional, help: ArgumentHelp(
        "Copy the secret to the clipboard instead of printing it; clear it after seconds (45 if only --clip) if it is still there.",
        valueName: "seconds"))
    var clip: Int?

    /// The seconds before the clearing, or nil when the secret is printed.
    var seconds: Int? { clip }

    /// The subcommands that take `--clip`.
    static let commands = ["find", "read", "totp", "generate"]
    /// The longest wait before the clearing: a day.
    static let maxSeconds = 86_400

    func validate() throws { try Self.check(clip) }

    /// Refuses a wait outside 1 second ... a day (shared with `kc find`'s fast path).
    static func check(_ seconds: Int?) throws {
        if let seconds, !(1...maxSeconds).contains(seconds) {
            throw ValidationError("--clip takes 1 to \(maxSeconds) seconds (\(Clipboard.defaultSeconds) when none is given)")
        }
    }

    /// The command line with a bare `--clip` (not followed by a number) written
    /// `--clip=45`, for the subcommands in `commands`; words after `--` are left alone.
    /// ArgumentParser has no option whose value may be left out.
    static func normalized(_ arguments: [String]) -> [String] {
        guard arguments.count > 2, commands.contains(arguments[1]), arguments.contains("--clip") else { return arguments }
        var out = Array(arguments.prefix(2))
        var i = 2
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" {
                out += arguments[i...]
                break
            }
            // The value of another option is left alone (`-s --clip` is a service).
            if word != "--clip", ValueOptions.takesValue(word, in: arguments[1]), i + 1 < arguments.count {
                out += [word, arguments[i + 1]]
                i += 2
                continue
            }
            if word == "--clip" {
                let next = i + 1 < arguments.count ? arguments[i + 1] : ""
                if next.isEmpty || !next.allSatisfy({ $0.isASCII && $0.isNumber }) {
                    out.append("--clip=\(Clipboard.defaultSeconds)")
                    i += 1
                    continue
                }
            }
            out.append(word)
            i += 1
        }
        return out
    }
}
