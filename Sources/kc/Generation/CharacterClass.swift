import KeychainCore

/// The four kinds of printable ASCII character a generated secret is made of, as sites'
/// password rules name them ("at least one digit and one symbol"). Disjoint: every
/// printable ASCII character but space is in exactly one.
///
///     CharacterClass.symbol.members.count        // 32: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
///     CharacterClass.of(UInt8(ascii: "7"))       // .digit
///     try CharacterClass.required("digit,symbol") // [.digit, .symbol]
enum CharacterClass: String, CaseIterable, Comparable {
    /// a-z (26), A-Z (26), 0-9 (10), and the 32 other printable ASCII characters.
    case lower, upper, digit, symbol

    /// The class's characters, in ASCII order.
    var members: [UInt8] {
        switch self {
        case .lower: return Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
        case .upper: return Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
        case .digit: return Array(UInt8(ascii: "0")...UInt8(ascii: "9"))
        case .symbol: return (0x21...0x7E).filter { Self.of($0) == .symbol }
        }
    }

    /// The class of a printable ASCII character (0x21-0x7E); nil for anything else.
    static func of(_ byte: UInt8) -> CharacterClass? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return .lower
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return .upper
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return .digit
        case 0x21...0x7E: return .symbol
        default: return nil
        }
    }

    /// The classes a `--charset` word names: one class, or `letters` / `alnum` for
    /// several. Singular and plural both work (`digit`, `digits`). Nil for another word.
    static func group(named word: String) -> [CharacterClass]? {
        switch word {
        case "lower", "lowercase": return [.lower]
        case "upper", "uppercase": return [.upper]
        case "letter", "letters": return [.lower, .upper]
        case "digit", "digits": return [.digit]
        case "symbol", "symbols": return [.symbol]
        case "alnum": return [.lower, .upper, .digit]
        default: return nil
        }
    }

    /// The words `group(named:)` knows, for messages and the typo check.
    static let groupNames = ["lower", "upper", "letters", "digits", "symbols", "alnum"]

    /// The classes of a `--require` list (`digit,symbol`; `none` for no requirement),
    /// sorted and without repeats.
    /// - Throws: errSecParam (exit 206) naming a word that is not one of the four classes.
    static func required(_ list: String, flag: String = "--require") throws -> [CharacterClass] {
        if list == "none" { return [] }
        var classes: Set<CharacterClass> = []
        for word in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard let group = group(named: word), group.count == 1 else {
                throw KeychainError(
                    errSecParam, "\(flag): '\(word)' is not a class a secret can be required to contain",
                    hint: "name some of lower, upper, digit, symbol, separated by commas (or none)")
            }
            classes.formUnion(group)
        }
        return classes.sorted()
    }

    /// Declaration order: lower, upper, digit, symbol.
    static func < (a: CharacterClass, b: CharacterClass) -> Bool {
        allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
    }
}
