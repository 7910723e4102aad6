/// One option of kc's command line, declared once: its spellings, what it takes, its help
/// text and value name, and what a Tab completes for it.
///
/// The entries live in `Options` (the table), with the list of each subcommand's options
/// (`Options.of(_:)`). Everything that knows an option reads it from there:
/// ArgumentParser's declarations (`@Option(name: Options.service.names, parsing:
/// .unconditional, help: Options.service.help, completion: Options.service.completion)`,
/// `OptionSpec+ArgumentParser.swift`), the argument normaliser (`ArgumentNormaliser`), the
/// fast parsers (`FindFastPath`, `RunFastPath`), and the flag names that messages and hints
/// suggest (`displayName`, `shortest`). docs/design.md, "One grammar", says how to add one.
///
/// This file and the table use no ArgumentParser type, and no `Set` or `Dictionary`: the
/// fast path reads them, and in a static binary the first use of a generic type that needs a
/// protocol conformance costs a scan of every conformance record (docs/performance.md).
/// A class, so that parsers tell entries apart by identity (`case Options.service:` in a
/// switch), even where two subcommands spell different options alike (`--all`, `-w`).
final class OptionSpec: Sendable {
    /// What follows the option's name on the command line.
    enum Value: Sendable {
        /// Nothing: a flag.
        case none
        /// Nothing: a flag that `--no-NAME` turns off (ArgumentParser's `.prefixedNo`).
        case noneInvertible
        /// Any text.
        case text
        /// A whole number.
        case number
        /// One of a fixed set of words (the property's `ExpressibleByArgument` type).
        case word
    }

    /// What a Tab offers for the option's value, where the value's type does not say.
    enum Candidates: Sendable {
        /// Keychain names and paths (`CompletionCandidates.keychains`).
        case keychains
        /// The services in the chosen keychain (`CompletionCandidates.services`).
        case services
        /// The accounts in the chosen keychain (`CompletionCandidates.accounts`).
        case accounts
        /// These words.
        case words([String])
    }

    /// The value meant when the option is given without one: `--clip` alone is `--clip=45`
    /// (ArgumentParser has no option whose value may be left out; `ArgumentNormaliser` writes
    /// it in).
    struct Omitted: Sendable {
        /// The value meant.
        let value: String
        /// Whether a number right after the option is its value (`--clip 10`); otherwise the
        /// next word is never the option's (`--generate -s x`).
        let numberFollowing: Bool
    }

    /// `-s`, with its dash; nil when the option has no one-letter name.
    let short: String?
    /// `--service`, with its dashes; nil when the option has only a one-letter name.
    let long: String?
    /// What follows the name.
    let value: Value
    /// The help text (ArgumentParser's abstract).
    let abstract: String
    /// The value's name in help (`--clip <seconds>`); nil for ArgumentParser's default, the
    /// property's name.
    let valueName: String?
    /// What a Tab offers; nil for what the value's type offers.
    let candidates: Candidates?
    /// The value meant when none is given; nil when one must be.
    let omitted: Omitted?

    /// - Parameters: as the properties; `short` and `long` are spelled with their dashes.
    init(
        _ short: String?, _ long: String?, _ value: Value, _ abstract: String, valueName: String? = nil,
        candidates: Candidates? = nil, omitted: Omitted? = nil
    ) {
        self.short = short
        self.long = long
        self.value = value
        self.abstract = abstract
        self.valueName = valueName
        self.candidates = candidates
        self.omitted = omitted
    }

    /// Whether the option takes a value (the next word, unconditionally, or `NAME=VALUE`).
    var takesValue: Bool {
        switch value {
        case .none, .noneInvertible: return false
        case .text, .number, .word: return true
        }
    }

    /// Every name the option answers to: `-s`, `--service`; `--no-user-presence` too for an
    /// invertible flag.
    var spellings: [String] {
        var out: [String] = []
        if let short { out.append(short) }
        if let long { out.append(long) }
        if case .noneInvertible = value, let long { out.append("--no-" + long.dropFirst(2)) }
        return out
    }

    /// Whether `name` (a word, or the part of `NAME=VALUE` before `=`) names this option.
    func isNamed(_ name: Substring) -> Bool {
        if let short, name == short { return true }
        guard let long else { return false }
        if name == long { return true }
        if case .noneInvertible = value, name.hasPrefix("--no-"), name.dropFirst(5) == long.dropFirst(2) { return true }
        return false
    }

    /// `-a/--account`, `--tag`: how messages name the option.
    var displayName: String {
        switch (short, long) {
        case (let short?, let long?): return short + "/" + long
        case (let short?, nil): return short
        case (nil, let long?): return long
        case (nil, nil): return ""
        }
    }

    /// `-a`, `--tag`: the shortest spelling, as hints suggest it.
    var shortest: String { short ?? long ?? "" }

    /// A word of the command line split into the option's name and the value attached with
    /// `=` (`--service=x`, `-s=x`, as ArgumentParser reads them); the word and nil for
    /// anything else.
    static func split(_ word: String) -> (name: Substring, attached: String?) {
        guard word.hasPrefix("-"), let equals = word.firstIndex(of: "=") else { return (word[...], nil) }
        return (word[..<equals], String(word[word.index(after: equals)...]))
    }
}

extension OptionSpec {
    /// `case Options.service:` in a switch over an option: the same entry of the table.
    static func ~= (pattern: OptionSpec, option: OptionSpec) -> Bool { pattern === option }
}
