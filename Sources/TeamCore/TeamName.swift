import KeychainCore

/// The names of team keychains (`docs/team.md`): `-k team:NAME` chooses one, and the
/// agent knows it by exactly that string. The rule is KeychainCore's `KeychainAddress`,
/// the one kc, kc-team and the team agent share.
public enum TeamName {
    /// The prefix of a team keychain's location.
    public static let prefix = KeychainAddress.teamPrefix

    /// The team name in a location `team:NAME` (an agent path), or nil when the location
    /// is a file keychain.
    /// - Throws: errSecParam for `team:` followed by a name kc does not accept.
    public static func parse(_ location: String) throws -> String? {
        switch try KeychainAddress(agentPath: location) {
        case .team(let name): name
        case .file: nil
        }
    }

    /// Checks a team name: 1 to 64 of a-z, 0-9, `-`, `_`, starting with a letter or digit
    /// (`KeychainAddress.init(teamName:)`).
    /// - Throws: errSecParam.
    public static func validate(_ name: String) throws {
        _ = try KeychainAddress(teamName: name)
    }
}
