import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Which keychain a command uses and where its password comes from, once parsed (by
/// ArgumentParser through `KeychainOptions`, or by `FindFastPath`).
struct KeychainChoice: Equatable {
    /// -k: a path or a name; nil for $KC_KEYCHAIN, the configuration file's or the default.
    var keychain: String?
    /// --password-stdin.
    var passwordStdin = false
    /// --password-file.
    var passwordFile: String?

    /// The keychain path chosen by -k, KC_KEYCHAIN, the configuration file or the default,
    /// as messages name it.
    var path: String { KeychainLocation.resolve(word) }

    /// The keychain chosen by -k, KC_KEYCHAIN, the configuration file or the default, parsed
    /// (`KeychainAddress`).
    /// - Throws: errSecParam for `team:` and a malformed team name.
    func address() throws -> KeychainAddress { try KeychainAddress(word) }

    /// Whether a keychain was named (so a missing one is an error, not created): by -k,
    /// KC_KEYCHAIN or the configuration file (docs/config.md).
    var isExplicit: Bool { word != nil }

    /// Whether -k or KC_KEYCHAIN named the keychain, which the configuration file's
    /// `keychain` does not: a runner token's team wins over the file's choice.
    var isChosenByFlagOrEnvironment: Bool { keychain != nil || Configuration.environmentKeychain != nil }

    /// -k, else KC_KEYCHAIN, else the configuration file's `keychain`; nil for the default.
    private var word: String? { keychain ?? Configuration.keychain }

    /// The keychain as -k, KC_KEYCHAIN or the configuration file named it; nil for the
    /// default. What a helper writes into a client's file (`kc aws-credentials -k NAME`),
    /// so the client, run without that environment, reaches the same keychain.
    var named: String? { word }

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
