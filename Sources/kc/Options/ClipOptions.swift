import ArgumentParser
import KeychainCore

/// `--clip [SECONDS]`: copy the secret to the clipboard instead of printing it, and clear
/// it after SECONDS (45) if the clipboard still holds it (`Clipboard`).
///
/// A command that prints one secret takes it with `@OptionGroup var clip: ClipOptions`
/// and, where it would print, `if let seconds = clip.seconds { try Clipboard.copy(secret:
/// bytes, clearAfter: seconds) }`; `Options.clip` goes in its list in `Options.of(_:)`, so
/// that a bare `--clip` gets the default (`ArgumentNormaliser`).
struct ClipOptions: ParsableArguments {
    /// The seconds given (`--clip=45` when only `--clip` was: `ArgumentNormaliser`).
    @Option(name: Options.clip.names, parsing: .unconditional, help: Options.clip.help, completion: Options.clip.completion)
    var clip: Int?

    /// The seconds before the clearing, or nil when the secret is printed.
    var seconds: Int? { clip }

    /// The longest wait before the clearing: a day.
    static let maxSeconds = ConfigFile.maxClipSeconds

    func validate() throws { try Self.check(clip) }

    /// Refuses a wait outside 1 second ... a day (shared with `kc find`'s fast path).
    static func check(_ seconds: Int?) throws {
        if let seconds, !(1...maxSeconds).contains(seconds) {
            throw ValidationError("--clip takes 1 to \(maxSeconds) seconds (\(Configuration.clipSeconds) when none is given)")
        }
    }
}
