#if canImport(Glibc)
import Glibc
#endif

/// Where keychains live and what a keychain's name means: shared by the `kc` command and
/// the `Security` module, so both find the same default keychain and name it to the agent
/// the same way.
public enum KeychainLocation {
    /// `$XDG_DATA_HOME/kc`, else `$HOME/.local/share/kc` (the home folder comes from $HOME,
    /// not the password database: static binaries cannot use NSS).
    public static var directory: String {
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/kc" }
        return (environment("HOME") ?? "/") + "/.local/share/kc"
    }

    /// The one rule for every place kc takes a keychain (`-k`, `KC_KEYCHAIN`, `kc create`,
    /// `kc backup`'s DEST, `--allow-keychain`, references): a value with a slash, or ending in
    /// `.keychain-db`, is a path (relative ones to the working folder); any other value is a
    /// NAME, `directory/NAME.keychain-db`; nil or empty is the default keychain,
    /// `directory/login.keychain-db`.
    ///
    /// A value starting with `team:` is a team keychain (`team:NAME`, see `teamName`): kept
    /// as it is, the agent's name for it, never a file.
    public static func resolve(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return directory + "/login.keychain-db" }
        if isTeam(value) || isPath(value) { return value }
        return directory + "/" + value + ".keychain-db"
    }

    /// Whether `value` names a file rather than a keychain in `directory` (see `resolve`).
    public static func isPath(_ value: String) -> Bool {
        !isTeam(value) && (value.contains("/") || value.hasSuffix(".keychain-db"))
    }

    /// The prefix of a team keychain's location, `team:NAME` (docs/team.md).
    public static let teamPrefix = "team:"

    /// Whether `location` is a team keychain (`team:…`): held only by the team agent,
    /// never opened as a file.
    public static func isTeam(_ location: String) -> Bool { location.hasPrefix(teamPrefix) }

    /// The team name of a location `team:NAME`, or nil for a file keychain.
    /// - Throws: errSecParam when NAME is not a team name: 1 to 64 of a-z, 0-9, `-` and
    ///   `_`, starting with a letter or digit (the rule of TeamCore's `TeamName`, which the
    ///   team agent applies; TeamTests checks that both agree).
    public static func teamName(_ location: String) throws -> String? {
        guard isTeam(location) else { return nil }
        let name = String(location.dropFirst(teamPrefix.count))
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x5f }
        guard (1...64).contains(name.utf8.count), allowed, let first = name.utf8.first, first != 0x2d, first != 0x5f else {
            throw KeychainError(errSecParam, "\"\(name)\" is not a team name: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit",
                                hint: "team keychains are -k team:NAME; a file whose name starts with team: is ./team:…")
        }
        return name
    }

    /// This device's file for the team keychain `name` (its member seed, wrapped under the
    /// device's team password): `$XDG_DATA_HOME/kc/teams/NAME.team`, else
    /// `~/.local/share/kc/teams/NAME.team`. `kc team join` and `kc team create` write it.
    public static func teamFile(_ name: String) -> String {
        directory + "/teams/" + name + ".team"
    }

    /// The keychain chosen by `$KC_KEYCHAIN`, else the default one.
    public static var chosen: String { resolve(environment("KC_KEYCHAIN")) }

    /// The absolute path with symbolic links resolved in its folders (the agent's name for
    /// the keychain). The file itself must not be a link: opening refuses that.
    /// A team location (`team:NAME`) is returned as it is: it is no file.
    public static func realPath(_ path: String) -> String {
        if isTeam(path) { return path }
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(folder, nil) else { return path }
        defer { free(resolved) }
        let dir = String(cString: resolved)
        return (dir == "/" ? "" : dir) + "/" + name
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
