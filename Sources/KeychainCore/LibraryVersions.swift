#if canImport(Glibc)
import Glibc
#endif

/// Versions of the libraries kc is built on (for `kc --version`).
public enum LibraryVersions {
    /// libsodium's version.
    public static var sodium: String { Sodium.version }
    /// SQLite's version.
    public static var sqlite: String { Database.sqliteVersion }
}
