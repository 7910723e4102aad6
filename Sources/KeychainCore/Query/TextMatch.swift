/// How a search compares the text attributes it gives (string and blob kinds) with an
/// item's: the query key `kcMatchText`, a kc extension with no Apple counterpart. Anything
/// but `exact` is answered like kSecMatchCaseInsensitive, by a scan of the class: the blind
/// indexes only know whole values (`docs/design.md`).
enum TextMatch: Equatable, Sendable {
    /// The whole value, byte for byte (the default; an index lookup).
    case exact
    /// The item's value starts with the given bytes.
    case prefix
    /// The given bytes occur anywhere in the item's value.
    case contains

    /// The mode a `kcMatchText` value names. - Throws: errSecParam for any other value.
    init(queryValue value: Any) throws {
        switch value as? String {
        case kcMatchTextExact?: self = .exact
        case kcMatchTextPrefix?: self = .prefix
        case kcMatchTextContains?: self = .contains
        default:
            throw KeychainError(errSecParam, "kcMatchText must be \"\(kcMatchTextExact)\", \"\(kcMatchTextPrefix)\" or \"\(kcMatchTextContains)\"")
        }
    }

    /// Whether `have` (an item's bytes) matches `wanted` (the query's) in this mode.
    func accepts(_ have: [UInt8], _ wanted: [UInt8]) -> Bool {
        switch self {
        case .exact: return have == wanted
        case .prefix: return have.count >= wanted.count && have[..<wanted.count].elementsEqual(wanted)
        case .contains: return Self.occurs(wanted, in: have)
        }
    }

    /// Whether `needle` occurs in `haystack` as one run of bytes (an empty needle always
    /// does). Bytes, not characters: a valid UTF-8 needle can only match at a character
    /// boundary of valid UTF-8, so no Unicode-aware search is needed.
    static func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
            if haystack[start] == first {
                var i = 1
                while i < needle.count && haystack[start + i] == needle[i] { i += 1 }
                if i == needle.count { return true }
            }
            start += 1
        }
        return false
    }
}
