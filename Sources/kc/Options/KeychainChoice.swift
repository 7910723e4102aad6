import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Which keychain a command uses and where its password comes from, once parsed (by
/// ArgumentParser through `KeychainOptions`, or by `FindFastPath`).
struct KeychainChoice: Equatable {
    /// -k: a path or a name; nil for $KC_KEYCHAIN or the default.
    var keychain: String?
    /// --password-stdin.
    var passwordStdin = false
    /// --password-file.
    var passwordFile: String?

    /// The keychain path chosen by -k, KC_KEYCHAIN or the default, as messages name it.
    var path: String { KeychainLocation.resolve(keychain ?? Environment.get("KC_KEYCHAIN")) }

    /// The keychain chosen by -k, KC_KEYCHAIN or the default, parsed (`KeychainAddress`).
    /// - Throws: errSecParam for `team:` and a malformed team name.
    func address() throws -> KeychainAddress { try KeychainAddress(keychain ?? Environment.get("KC_KEYCHAIN")) }

    /// Whether the user named a keychain (so a missing one is an error, not created).
    var isExplicit: Bool { keychain != nil || Environment.get("KC_KEYCHAIN") != nil }

    func validate() throws {
        // Most often `-k "$UNSET"` in a script: never fall back to the default keychain.
        if let keychain, keychain.isEmpty {
            throw ValidationError("-k/--keychain is empty: give a keychain path or name")
        }
        if passwordStdin && passwordFile != nil {
            throw ValidationError("--password-stdin and --password-file are two sources for one password; give one")
        }
    }
}
