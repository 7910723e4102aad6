import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// What a generated secret is made of, validated: characters drawn from a set, with
/// classes it must contain, or words drawn from the EFF list. `PasswordGenerator` draws
/// from it; `entropyBits` says how many secrets it can give, as bits.
///
///     let recipe = PasswordRecipe.characters(.init(alphabet: CharacterClass.digit.members, length: 6, required: []))
///     recipe.entropyBits      // 19.93: 10^6 equally likely secrets
enum PasswordRecipe {
    /// Characters from a set (`--length`, `--charset`, `--require`, `--exclude`).
    case characters(CharacterRecipe)
    /// A passphrase (`--words`, `--separator`).
    case words(WordRecipe)

    /// log2 of the number of secrets the recipe gives, each equally likely.
    var entropyBits: Double {
        switch self {
        case .characters(let recipe): return recipe.entropyBits
        case .words(let recipe): return recipe.entropyBits
        }
    }

    /// The line shown on a terminal: `157.1 bits of entropy (24 characters from 94, ...)`.
    var entropyLine: String {
        let bits = entropyBits
        let rounded = (bits * 10).rounded() / 10
        let shown = rounded == rounded.rounded() ? "\(Int(rounded)).0" : "\(rounded)"
        switch self {
        case .characters(let recipe):
            var line = "\(shown) bits of entropy (\(recipe.length) character\(recipe.length == 1 ? "" : "s") from a set of \(recipe.alphabet.count)"
            if !recipe.required.isEmpty {
                line += ", at least one of each: " + recipe.required.map(\.rawValue).joined(separator: ", ")
            }
            return line + ")"
        case .words(let recipe):
            return "\(shown) bits of entropy (\(recipe.count) word\(recipe.count == 1 ? "" : "s") from the EFF list of \(EFFWordList.words.count))"
        }
    }
}

/// Characters drawn uniformly from `alphabet`, `length` of them, keeping only the strings
/// that contain at least one character of each `required` class: uniform over exactly
/// the strings the rules allow.
struct CharacterRecipe {
    /// The distinct characters to draw from (printable ASCII), at least two.
    let alphabet: [UInt8]
    /// How many characters.
    let length: Int
    /// The classes every secret contains at least one character of.
    let required: [CharacterClass]

    /// The bounds of `--length`.
    static let lengths = 1...4096

    /// The fraction of all `length`-character strings over `alphabet` that contain each
    /// required class, by inclusion–exclusion: the sum over subsets T of the required
    /// classes of (-1)^|T| (1 - |T's characters| / |alphabet|)^length.
    var satisfyingFraction: Double {
        let sizes = required.map { kind in Double(alphabet.filter { CharacterClass.of($0) == kind }.count) }
        let n = Double(alphabet.count)
        var total = 0.0
        for subset in 0..<(1 << sizes.count) {
            var missing = 0.0
            var members = 0
            for (i, size) in sizes.enumerated() where subset & (1 << i) != 0 {
                missing += size
                members += 1
            }
            let term = pow(1 - missing / n, Double(length))
            total += members % 2 == 0 ? term : -term
        }
        return max(0, min(1, total))
    }

    /// length × log2(|alphabet|), less what the requirements rule out.
    var entropyBits: Double {
        Double(length) * log2(Double(alphabet.count)) + log2(satisfyingFraction)
    }

    /// Whether `bytes` has a character of every required class.
    func isSatisfied(by bytes: UnsafeRawBufferPointer) -> Bool {
        var seen: Set<CharacterClass> = []
        for byte in bytes { if let kind = CharacterClass.of(byte) { seen.insert(kind) } }
        return required.allSatisfy(seen.contains)
    }

    /// Refuses rules no secret (or too few secrets) can meet, before anything is drawn.
    /// - Throws: errSecParam (exit 206) naming the rule at fault.
    func check() throws {
        guard Self.lengths.contains(length) else {
            throw KeychainError(errSecParam, "--length \(length) is out of range; give \(Self.lengths.lowerBound) to \(Self.lengths.upperBound)")
        }
        guard alphabet.count >= 2 else {
            let left = alphabet.isEmpty ? "no characters" : "only '\(String(decoding: alphabet, as: UTF8.self))'"
            throw KeychainError(
                errSecParam, "the character set has \(left) left to draw from",
                hint: "a secret needs at least two characters to choose from: widen --charset or shorten --exclude")
        }
        for kind in required where !alphabet.contains(where: { CharacterClass.of($0) == kind }) {
            throw KeychainError(
                errSecParam, "a \(kind.rawValue) is required, but the character set has none",
                hint: "add \(kind.rawValue)s to --charset, exclude fewer, or drop it from --require")
        }
        guard length >= required.count else {
            throw KeychainError(
                errSecParam,
                "\(length) character\(length == 1 ? "" : "s") cannot hold one of each of the \(required.count) required classes (\(required.map(\.rawValue).joined(separator: ", ")))",
                hint: "use --length \(required.count) or more, or require fewer classes (--require none)")
        }
    }
}

/// `count` words drawn uniformly from the EFF large list, joined by `separator`.
struct WordRecipe {
    /// How many words.
    let count: Int
    /// What goes between two words (printable ASCII, space included; may be empty).
    let separator: [UInt8]

    /// The bounds of `--words`.
    static let counts = 1...64
    /// The longest `--separator`.
    static let longestSeparator = 16

    /// count × log2(7776) = count × 12.925 bits.
    var entropyBits: Double { Double(count) * log2(Double(EFFWordList.words.count)) }

    /// - Throws: errSecParam (exit 206) for a count out of range or a separator that is
    ///   not printable ASCII or is too long.
    func check() throws {
        guard Self.counts.contains(count) else {
            throw KeychainError(errSecParam, "--words \(count) is out of range; give \(Self.counts.lowerBound) to \(Self.counts.upperBound)")
        }
        guard separator.count <= Self.longestSeparator else {
            throw KeychainError(errSecParam, "--separator is \(separator.count) characters; at most \(Self.longestSeparator) are allowed")
        }
        guard separator.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw KeychainError(
                errSecParam, "--separator: only printable ASCII (space included) is allowed",
                hint: "for example --separator - or --separator ' ' or --separator ''")
        }
    }
}
