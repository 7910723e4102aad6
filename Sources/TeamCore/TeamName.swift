import KeychainCore

/// The names of team keychains (`docs/team.md`): `-k team:NAME` chooses one, and the
/// agent knows it by exactly that string.
public enum TeamName {
    /// The prefix of a team keychain's location.
    public static let prefix = KeychainLocation.teamPrefix

    /// The team name in a location `team:NAME`, or nil when the location is a file keychain.
    /// - Throws: errSecParam for `team:` followed by a name kc does not accept.
    public static func parse(_ location: String) throws -> String? {
        try KeychainLocation.teamName(location)
    }

    /// Checks a team name: 1 to 64 of a-z, 0-9, `-`, `_`, starting with a letter or digit
    /// (`KeychainLocation.teamName`, the one rule kc and kc-team share).
    /// - Throws: errSecParam.
    public static func validate(_ name: String) throws {
        _ = try KeychainLocation.teamName(prefix + name)
    }
}
