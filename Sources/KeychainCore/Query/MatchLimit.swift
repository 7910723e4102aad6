/// How many items a search returns.
enum MatchLimit: Equatable, Sendable {
    /// `kSecMatchLimitOne` (the default) or the number 1: a single value, not an array.
    case one
    /// A number of items greater than 1 or 0: an array.
    case count(Int)
    /// `kSecMatchLimitAll` or -1: an array of every match.
    case all

    /// Whether the result is an array.
    var isArray: Bool { self != .one }

    /// The maximum number of items, nil for no limit.
    var maximum: Int? {
        switch self {
        case .one: return 1
        case .count(let n): return n
        case .all: return nil
        }
    }
}
