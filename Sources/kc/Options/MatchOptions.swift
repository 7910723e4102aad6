import ArgumentParser

/// The flags that change how the text attributes given match: find, update, delete and move.
struct MatchOptions: ParsableArguments {
    @Flag(name: Options.ignoreCase.names, help: Options.ignoreCase.help)
    var ignoreCase = false

    @Flag(name: Options.contains.names, help: Options.contains.help)
    var contains = false

    @Flag(name: Options.prefix.names, help: Options.prefix.help)
    var prefix = false

    /// The parsed values, as plain data.
    var matching: TextMatching { TextMatching(ignoreCase: ignoreCase, contains: contains, prefix: prefix) }

    func validate() throws { try matching.validate() }
}
