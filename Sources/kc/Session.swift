import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Opens the keychain a command works on, with a password from the usual sources.
enum Session {
    /// Opens an existing keychain.
    static func open(_ options: KeychainOptions) throws -> Keychain {
        let path = options.path
        try checkExists(path, explicit: true)
        let password = try PasswordSource.current(options, path: path)
        return try Keychain.open(at: path, password: password)
    }

    /// Opens the keychain, creating the default one on first use (kc add).
    static func openOrCreateDefault(_ options: KeychainOptions, profile: KDFProfile) throws -> Keychain {
        let path = options.path
        if !options.isExplicit && !exists(path) {
            let password = try PasswordSource.forNewKeychain(options, path: path)
            let keychain = try Keychain.create(at: path, password: password, profile: profile)
            Report.note("created the keychain \(path)")
            return keychain
        }
        return try open(options)
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// A clear message for a missing keychain before any password is asked for.
    static func checkExists(_ path: String, explicit: Bool) throws {
        guard !exists(path) else { return }
        throw KeychainError(errSecNoSuchKeychain, "no keychain at \(path)",
                            hint: "create it with `kc create \(path)`, or choose another with -k or KC_KEYCHAIN")
    }
}
