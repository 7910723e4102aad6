import ArgumentParser
import KeychainCore
import KeychainFormats
#if canImport(Glibc)
import Glibc
#endif

/// `kc generate`: prints a new random secret (nothing is stored; `kc add --generate`
/// stores one).
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a new random password or passphrase.",
        discussion: """
            Examples:
              kc generate                          # 24 characters, all four classes
              kc generate --length 32 --no-symbols
              kc generate --digits-only --length 6
              kc generate --charset 0-9a-f --length 64
              kc generate --require digit,symbol --exclude '"\\`'
              kc generate --words 6                # correct-horse-battery-...
              kc generate | kc add -s example.com -a alice
              kc generate --clip                 # to the clipboard, cleared in 45 s

            Drawn from libsodium's random source, each character or word with
            equal chance (no modulo bias). By default: 24 characters from
            letters, digits and the 32 ASCII symbols, at least one of each kind.
            With --charset, nothing is required unless --require says so;
            --require redraws whole secrets, so the result stays uniform over
            the secrets that meet it. --words uses the EFF large word list
            (7776 words, CC BY 3.0, built into kc).

            On a terminal the entropy in bits is shown on stderr, never in a
            pipe. The secret ends in a newline only on a terminal (as kc find
            -w), or when --count prints several.

            Exit 2 for options that conflict, 206 for a value that cannot be
            used (a length out of range, an empty set, rules no secret meets).
            """
    )

    @OptionGroup var options: GenerateOptions
    /// `--clip [SECONDS]`: the secret to the clipboard instead of stdout.
    @OptionGroup var clip: ClipOptions

    @Option(name: Options.count.names, help: Options.count.help, completion: Options.count.completion)
    var count = 1

    /// `--json`: `{"secret"}`, or an array of them with `--count` above 1.
    @Flag(name: Options.generateJSON.names, help: Options.generateJSON.help)
    var json = false

    /// The bounds of `--count`.
    static let counts = 1...100_000

    /// `--json` prints the secret, so it does not go with `--clip`.
    func validate() throws {
        if json, clip.seconds != nil { throw ValidationError("--json prints the secret: leave out --clip") }
    }

    func run() throws {
        guard Self.counts.contains(count) else {
            throw KeychainError(errSecParam, "--count \(count) is out of range; give \(Self.counts.lowerBound) to \(Self.counts.upperBound)")
        }
        let recipe = try options.request.recipe()
        if let seconds = clip.seconds {
            guard count == 1 else { throw ValidationError("--clip copies one secret: leave out --count") }
            let secret = try PasswordGenerator.generate(recipe)
            try Clipboard.copy(secret: secret, clearAfter: seconds)
            if isatty(2) == 1 { Report.note(recipe.entropyLine) }
            return
        }
        if json {
            try printJSON(recipe)
            return
        }
        let newline = count > 1 || Terminal.stdoutIsTerminal
        for _ in 0..<count {
            let secret = try PasswordGenerator.generate(recipe)
            _ = secret.withUnsafeBytes { Report.writeAll(1, $0) }
            if newline { Report.writeAll(1, [0x0A]) }
        }
        if isatty(2) == 1 { Report.note(recipe.entropyLine) }
    }

    /// The secrets as JSON: one object, or an array of them when `--count` is above 1.
    /// The secret is a JSON string: a word separator of any bytes is escaped, never lost.
    private func printJSON(_ recipe: PasswordRecipe) throws {
        var objects: [String] = []
        for _ in 0..<count {
            let secret = try PasswordGenerator.generate(recipe)
            let text = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            objects.append(JSON.object([("secret", JSON.string(text))]))
        }
        Report.out((count > 1 ? JSON.array(objects) : objects[0]) + "\n")
        if isatty(2) == 1 { Report.note(recipe.entropyLine) }
    }
}
