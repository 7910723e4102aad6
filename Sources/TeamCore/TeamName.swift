import KeychainCore

/// The names of team keychains (`docs/team.md`): `-k team:NAME` chooses one, and the
/// agent knows it by exactly that string.
public enum TeamName {
    /// The prefix of a team keychain's location.
    public static let prefix = "team:"

    /// The team name in a location `team:NAME`, or nil when the location is a file keychain.
    /// - Throws: errSecParam for `team:` followed by a name kc does not accept.
    public static func parse(_ location: String) throws -> String? {
        guard location.hasPrefix(prefix) else { return nil }
        let name = String(location.dropFirst(prefix.count))
        try validate(name)
        return name
    }

    /// Checks a team name: 1 to 64 of a-z, 0-9, `-`, `_`, starting with a letter or digit.
    /// - Throws: errSecParam.
    public static func validate(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x5f }
        guard (1...64).contains(name.utf8.count), allowed, let first = name.utf8.first, first != 0x2d, first != 0x5f else {
            throw KeychainError(errSecParam, "\"\(name)\" is not a team name: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit")
        }
    }
}
