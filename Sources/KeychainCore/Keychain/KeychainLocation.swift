#if canImport(Glibc)
import Glibc
#endif

/// Where keychains live: shared by the `kc` command and the `Security` module, so both find
/// the same default keychain and name it to the agent the same way. What a word naming a
/// keychain means is `KeychainAddress`.
public enum KeychainLocation {
    /// `$XDG_DATA_HOME/kc`, else `$HOME/.local/share/kc` (the home folder comes from $HOME,
    /// not the password database: static binaries cannot use NSS).
    public static var directory: String {
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/kc" }
        return (environment("HOME") ?? "/") + "/.local/share/kc"
    }

    /// How messages name the keychain a word chooses (`KeychainAddress.init(_:)`, the one
    /// rule for every place kc takes a keychain): the file's path, or `team:NAME`. A word
    /// that does not parse (`team:` and a malformed name) is kept as it is: whoever parses
    /// it to use it says why.
    public static func resolve(_ value: String?) -> String {
        do { return try KeychainAddress(value).description } catch { return value ?? "" }
    }

    /// Whether a keychain file's word (not a team keychain's, `team:…`: see
    /// `KeychainAddress`) is a path rather than a NAME in `directory`: it has a slash, or
    /// ends in `.keychain-db`.
    public static func isPath(_ value: String) -> Bool {
        value.contains("/") || value.hasSuffix(".keychain-db")
    }

    /// This device's file for the team keychain `name` (its member seed, wrapped under the
    /// device's team password): `$XDG_DATA_HOME/kc/teams/NAME.team`, else
    /// `~/.local/share/kc/teams/NAME.team`. `kc team join` and `kc team create` write it.
    public static func teamFile(_ name: String) -> String {
        directory + "/teams/" + name + ".team"
    }

    /// The keychain chosen by `$KC_KEYCHAIN`, else the default one, as messages name it.
    public static var chosen: String { resolve(environment("KC_KEYCHAIN")) }

    /// A keychain file's absolute path with symbolic links resolved in its folders (the
    /// agent's name for it, `KeychainAddress.agentPath`). The file itself must not be a
    /// link: opening refuses that.
    public static func realPath(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(folder, nil) else { return path }
        defer { free(resolved) }
        let dir = String(cString: resolved)
        return (dir == "/" ? "" : dir) + "/" + name
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
