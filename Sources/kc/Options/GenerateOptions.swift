import ArgumentParser

/// `kc generate`'s options for what a secret is made of (`GenerationRequest`).
struct GenerateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("How many characters (1-4096; default 24).", valueName: "n"))
    var length: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp(
        "The characters to draw from: class names (lower, upper, letters, digits, symbols, alnum) or characters (a-f, !@#), separated by commas.",
        valueName: "spec"), completion: .list(CharacterClass.groupNames))
    var charset: String?

    @Flag(help: "Letters and digits only.")
    var noSymbols = false

    @Flag(help: "Digits only (a PIN).")
    var digitsOnly = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp(
        "At least one character of each class: lower, upper, digit, symbol, separated by commas, or none.",
        valueName: "list"), completion: .list(CharacterClass.allCases.map(\.rawValue) + ["none"]))
    var require: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Characters never to use (quote it for the shell).", valueName: "chars"))
    var exclude: String?

    @Option(name: .long, help: ArgumentHelp("A passphrase of N words from the EFF list (1-64) instead of characters.", valueName: "n"))
    var words: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("What goes between words (default -).", valueName: "s"))
    var separator: String?

    /// The options as a request; conflicts are usage errors (exit 2).
    var request: GenerationRequest {
        GenerationRequest(length: length, charset: charset, noSymbols: noSymbols, digitsOnly: digitsOnly,
                          words: words, separator: separator, require: require, exclude: exclude)
    }

    func validate() throws {
        if let conflict = request.conflict { throw ValidationError(conflict) }
    }
}
