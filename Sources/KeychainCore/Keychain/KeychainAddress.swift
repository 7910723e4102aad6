/// Which keychain a word names, parsed once where the word comes in (`-k`, `KC_KEYCHAIN`,
/// the default, `kc create`'s and `kc backup`'s arguments, a reference's `keychain=`): a
/// keychain file, or a team keychain (`docs/team.md`). Everything below the edge switches
/// on it, so each command decides what it does with a team keychain (the compiler asks),
/// and no string is tested for `team:` again.
///
/// The grammar (`init(_:)`), one rule for every place kc takes a keychain:
/// - nil or empty: the default keychain, `KeychainLocation.directory/login.keychain-db`;
/// - `team:NAME`: the team keychain NAME (`init(teamName:)` checks the name);
/// - a word with a slash, or ending in `.keychain-db`: that file (relative to the working
///   folder), so a file whose name starts with `team:` is `./team:…`;
/// - any other word NAME: the file `KeychainLocation.directory/NAME.keychain-db`.
///
/// The agents know a keychain by its `agentPath` (the "path" of `docs/protocol.md`): a
/// file's real path, or `team:NAME`. That string is made here and read back here
/// (`init(agentPath:)`) only.
public enum KeychainAddress: Hashable, Sendable, CustomStringConvertible {
    /// A keychain file at this path: absolute, or relative to the working folder.
    case file(String)
    /// The team keychain of this team name (`team:NAME`): held only by the team agent,
    /// never opened as a file. Made by `init(_:)`, `init(agentPath:)` or
    /// `init(teamName:)`, which check the name.
    case team(String)

    /// The prefix of a team keychain's word and agent path, `team:NAME`.
    public static let teamPrefix = "team:"

    /// The keychain `word` names (see the type's grammar).
    /// - Throws: errSecParam for `team:` followed by a name that is not a team name.
    public init(_ word: String?) throws {
        guard let word, !word.isEmpty else {
            self = .file(KeychainLocation.directory + "/login.keychain-db")
            return
        }
        if let team = try Self.team(word) {
            self = team
        } else if KeychainLocation.isPath(word) {
            self = .file(word)
        } else {
            self = .file(KeychainLocation.directory + "/" + word + ".keychain-db")
        }
    }

    /// The keychain an agent path names (`agentPath`, what the agent protocol carries):
    /// `team:NAME` is the team keychain, anything else a file at that path.
    /// - Throws: errSecParam for `team:` followed by a name that is not a team name.
    public init(agentPath: String) throws {
        self = try Self.team(agentPath) ?? .file(agentPath)
    }

    /// The team keychain of a word or agent path `team:NAME`; nil when it does not start
    /// with `team:`. - Throws: errSecParam for a malformed NAME.
    private static func team(_ word: String) throws -> KeychainAddress? {
        guard word.hasPrefix(teamPrefix) else { return nil }
        return try KeychainAddress(teamName: String(word.dropFirst(teamPrefix.count)))
    }

    /// The team keychain `name`.
    /// - Throws: errSecParam when `name` is not a team name: 1 to 64 of a-z, 0-9, `-` and
    ///   `_`, starting with a letter or digit (the one rule kc, kc-team and the team agent
    ///   apply, through TeamCore's `TeamName` for the last two).
    public init(teamName name: String) throws {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x5f }
        guard (1...64).contains(name.utf8.count), allowed, let first = name.utf8.first, first != 0x2d, first != 0x5f else {
            throw KeychainError(
                errSecParam, "\"\(name)\" is not a team name: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit",
                hint: "team keychains are -k team:NAME; a file whose name starts with team: is ./team:…")
        }
        self = .team(name)
    }

    /// The keychain chosen by `$KC_KEYCHAIN`, else the default one.
    /// - Throws: errSecParam for a malformed team name.
    public static var chosen: KeychainAddress {
        get throws { try KeychainAddress(KeychainLocation.environment("KC_KEYCHAIN")) }
    }

    /// How messages name it: the file's path as chosen (not made real), or `team:NAME`.
    public var description: String {
        switch self {
        case .file(let path): path
        case .team(let name): Self.teamPrefix + name
        }
    }

    /// What the agents call it, the "path" of every request (`docs/protocol.md`): the
    /// file's absolute path with the links in its folders resolved (`KeychainLocation.realPath`,
    /// read now), or `team:NAME`, which is no file and is sent as it is.
    public var agentPath: String {
        switch self {
        case .file(let path): KeychainLocation.realPath(path)
        case .team: description
        }
    }
}
