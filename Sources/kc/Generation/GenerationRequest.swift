import KeychainCore

/// The generation options as given, from `kc generate`'s flags or `kc add --generate=SPEC`
/// (`GenerationRequest(spec:)`), before they are checked: `recipe()` checks them and fills
/// in the defaults.
///
/// Defaults (docs/commands.md, "kc generate", says why): 24 characters from letters, digits
/// and the 32 ASCII symbols, with at least one of each of the four; `--words N` joins the
/// words with `-`.
///
///     var request = GenerationRequest()
///     request.length = 32
///     let recipe = try request.recipe()    // 32 characters from 94
struct GenerationRequest {
    /// `--length N`.
    var length: Int?
    /// `--charset SPEC` (`CharacterSetSpec`).
    var charset: String?
    /// `--no-symbols`: letters and digits.
    var noSymbols = false
    /// `--digits-only`.
    var digitsOnly = false
    /// `--words N`: a passphrase.
    var words: Int?
    /// `--separator S` between words.
    var separator: String?
    /// `--require LIST`.
    var require: String?
    /// `--exclude CHARS`.
    var exclude: String?

    /// The default length: 24 characters.
    static let defaultLength = 24
    /// The default separator between words.
    static let defaultSeparator = "-"

    /// The options that do not go together, as a message; nil when they all do. Checked as
    /// a usage error by `kc generate` (exit 2) and as errSecParam for a SPEC.
    var conflict: String? {
        let sets = [charset != nil ? "--charset" : nil, noSymbols ? "--no-symbols" : nil, digitsOnly ? "--digits-only" : nil].compactMap { $0 }
        if sets.count > 1 { return "\(sets.joined(separator: " and ")) each choose the characters; give one" }
        if words != nil {
            let characterOnly =
                sets
                + [
                    length != nil ? "--length" : nil, require != nil ? "--require" : nil,
                    exclude != nil ? "--exclude" : nil
                ].compactMap { $0 }
            if let first = characterOnly.first { return "--words makes a passphrase of words; \(first) is for characters" }
        } else if separator != nil {
            return "--separator goes between words: use it with --words N"
        }
        return nil
    }

    /// The checked recipe, defaults filled in.
    /// - Throws: errSecParam (exit 206) for options that conflict, values out of range,
    ///   characters that are not printable ASCII, and rules no secret can meet.
    func recipe() throws -> PasswordRecipe {
        if let conflict { throw KeychainError(errSecParam, conflict) }
        if let words {
            let recipe = WordRecipe(count: words, separator: Array((separator ?? Self.defaultSeparator).utf8))
            try recipe.check()
            return .words(recipe)
        }
        var alphabet: [UInt8]
        if let charset {
            alphabet = try CharacterSetSpec.characters(charset, flag: "--charset")
        } else if digitsOnly {
            alphabet = CharacterClass.digit.members
        } else if noSymbols {
            alphabet = CharacterClass.lower.members + CharacterClass.upper.members + CharacterClass.digit.members
        } else {
            alphabet = CharacterClass.allCases.flatMap(\.members)
        }
        if let exclude {
            let excluded = try CharacterSetSpec.excluded(exclude)
            alphabet.removeAll(where: excluded.contains)
        }
        let required: [CharacterClass]
        if let require {
            required = try CharacterClass.required(require)
        } else if charset == nil && !digitsOnly {
            // The built-in sets: one of each class still in the set, as sites ask.
            required = CharacterClass.allCases.filter { kind in alphabet.contains { CharacterClass.of($0) == kind } }
        } else {
            required = []
        }
        let recipe = CharacterRecipe(alphabet: alphabet.sorted(), length: length ?? Self.defaultLength, required: required)
        try recipe.check()
        return .characters(recipe)
    }
}
