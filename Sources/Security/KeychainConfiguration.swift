#if os(Linux)
import KeychainCore

/// Which kc keychain the SecItem functions use. Without a call here: `$KC_KEYCHAIN` (a path
/// or a name) or the default keychain (`~/.local/share/kc/login.keychain-db`), through
/// the agent when `kc unlock` holds it, else opened with `$KC_PASSWORD`; with neither,
/// the calls return errSecInteractionNotAllowed, as Apple's do for a locked keychain.
///
///     KeychainConfiguration.use(keychain: "/srv/app/app.keychain-db", password: password)
///     let status = SecItemCopyMatching(query as CFDictionary, &item)
public enum KeychainConfiguration {
    /// Uses the keychain at `keychain` (a path, or a name in kc's folder), opened now in
    /// this process with `password` (one key derivation), for every later call.
    /// - Returns: errSecSuccess; errSecNoSuchKeychain, errSecAuthFailed, errSecDecode… when
    ///   it cannot be opened (the previous choice then stays).
    @discardableResult
    public static func use(keychain: String, password: String) -> OSStatus {
        osStatus { try KeychainAccess.shared.use(path: keychain, password: password) }
    }

    /// Uses the keychain at `keychain` (a path or a name) through the agent or
    /// `$KC_PASSWORD`, as the default keychain is used.
    public static func use(keychain: String) {
        KeychainAccess.shared.use(path: keychain)
    }

    /// Back to the default: `$KC_KEYCHAIN` or the default keychain.
    public static func useDefault() {
        KeychainAccess.shared.use(path: nil)
    }
}
#endif
