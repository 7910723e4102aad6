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
    public static func resolve(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return directory + "/login.keychain-db" }
        if isPath(value) { return value }
        return directory + "/" + value + ".keychain-db"
    }

    /// Whether `value` names a file rather than a keychain in `directory` (see `resolve`).
    public static func isPath(_ value: String) -> Bool {
        value.contains("/") || value.hasSuffix(".keychain-db")
    }

    /// The keychain chosen by `$KC_KEYCHAIN`, else the default one.
    public static var chosen: String { resolve(environment("KC_KEYCHAIN")) }

    /// The absolute path with symbolic links resolved in its folders (the agent's name for
    /// the keychain). The file itself must not be a link: opening refuses that.
    public static func realPath(_ path: String) -> String {
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
