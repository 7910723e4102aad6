import ArgumentParser

/// The flags that change how the text attributes given match: find, update, delete and move.
struct MatchOptions: ParsableArguments {
    @Flag(name: .long, help: "Compare text attributes ignoring case (a kc extension: scans and decrypts the class).")
    var ignoreCase = false

    @Flag(name: .long, help: "Text attributes match when they contain the text given (-s git finds github.com; a kc extension: scans and decrypts the class).")
    var contains = false

    @Flag(name: .long, help: "Text attributes match when they start with the text given (a kc extension: scans and decrypts the class).")
    var prefix = false

    /// The parsed values, as plain data.
    var matching: TextMatching { TextMatching(ignoreCase: ignoreCase, contains: contains, prefix: prefix) }

    func validate() throws { try matching.validate() }
}
