import KeychainCore

/// The configuration file as kc applies it (`ConfigFile`, docs/config.md): read once, the
/// first time a value is asked for, and checked by `KC.main` before any command that may
/// use it, so a malformed file stops the command before it does anything (exit 206).
///
/// Each value here is the file's, else the environment's where a `KC_*` variable exists,
/// else kc's default; a flag, where the command has one, wins over all of them (the one
/// table of docs/config.md). `kc config` prints each with where it came from.
enum Configuration {
    private enum Loaded: Sendable {
        case file(ConfigFile)
        case failed(KeychainError)
    }

    /// One `lstat` when there is no file; one small read when there is.
    private static let loaded: Loaded = {
        do {
            return .file(try ConfigFile.load())
        } catch let error as KeychainError {
            return .failed(error)
        } catch {
            return .failed(KeychainError(errSecParam, "the configuration file could not be read"))
        }
    }()

    /// Stops the command when the file exists but is unsafe or malformed.
    /// - Throws: the file's error (errSecParam naming the file and line, or errSecIO).
    static func check() throws {
        if case .failed(let error) = loaded { throw error }
    }

    /// Why the file was refused; nil when it was read (or there is none). For the commands
    /// that go on without it (`kc lock`, `Startup.ignoresConfiguration`).
    static var failure: KeychainError? {
        if case .failed(let error) = loaded { return error }
        return nil
    }

    /// The file's values; none when it could not be read (`check` stops the command first).
    static var file: ConfigFile {
        if case .file(let file) = loaded { return file }
        return ConfigFile(path: ConfigFile.defaultPath)
    }

    /// The keychain when no `-k` is given: `KC_KEYCHAIN`, else the file's `keychain`; nil
    /// for the default (login).
    static var keychain: String? { environmentKeychain ?? file.keychain?.value }

    /// `KC_KEYCHAIN`, nil when unset or empty: an empty one is most often `"$UNSET"` in a
    /// script, which must not pass over the file's keychain for login (`-k ""` is refused
    /// for the same mistake).
    static var environmentKeychain: String? {
        guard let value = Environment.get("KC_KEYCHAIN"), !value.isEmpty else { return nil }
        return value
    }

    /// What `--clip` alone means: the file's `clip-seconds`, else 45.
    static var clipSeconds: Int { file.clipSeconds?.value ?? Clipboard.defaultSeconds }

    /// The key-derivation profile of a new keychain when no `--kdf` is given: the file's
    /// `kdf`, else moderate.
    static var kdf: KDFProfile { file.kdf?.value ?? .moderate }

    /// The idle timeout kc asks the agent for when no `--timeout` is given: the file's
    /// `idle-timeout`, else 0 (the keychain's own, `kc settings`).
    static var idleTimeout: UInt64 { file.idleTimeout?.value ?? 0 }

    /// The absolute timeout kc asks the agent for when no `--max` is given: the file's
    /// `max-timeout`, else 0 (the keychain's own, `kc settings`).
    static var maxTimeout: UInt64 { file.maxTimeout?.value ?? 0 }
}
