import ArgumentParser

/// `kc generate`'s options for what a secret is made of (`GenerationRequest`).
struct GenerateOptions: ParsableArguments {
    @Option(name: Options.length.names, help: Options.length.help, completion: Options.length.completion)
    var length: Int?

    @Option(name: Options.charset.names, parsing: .unconditional, help: Options.charset.help, completion: Options.charset.completion)
    var charset: String?

    @Flag(name: Options.noSymbols.names, help: Options.noSymbols.help)
    var noSymbols = false

    @Flag(name: Options.digitsOnly.names, help: Options.digitsOnly.help)
    var digitsOnly = false

    @Option(name: Options.require.names, parsing: .unconditional, help: Options.require.help, completion: Options.require.completion)
    var require: String?

    @Option(name: Options.exclude.names, parsing: .unconditional, help: Options.exclude.help, completion: Options.exclude.completion)
    var exclude: String?

    @Option(name: Options.words.names, help: Options.words.help, completion: Options.words.completion)
    var words: Int?

    @Option(name: Options.separator.names, parsing: .unconditional, help: Options.separator.help, completion: Options.separator.completion)
    var separator: String?

    /// The options as a request; conflicts are usage errors (exit 2).
    var request: GenerationRequest {
        GenerationRequest(
            length: length, charset: charset, noSymbols: noSymbols, digitsOnly: digitsOnly,
            words: words, separator: separator, require: require, exclude: exclude)
    }

    func validate() throws {
        if let conflict = request.conflict { throw ValidationError(conflict) }
    }
}
