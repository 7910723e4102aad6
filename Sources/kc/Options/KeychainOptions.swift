import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Which keychain a command uses and where its password comes from.
struct KeychainOptions: ParsableArguments {
    @Option(name: [.customShort("k"), .long], parsing: .unconditional, help: ArgumentHelp(
        "The keychain: a path, or a NAME for ~/.local/share/kc/NAME.keychain-db. Default: $KC_KEYCHAIN, else login.",
        valueName: "path|name"))
    var keychain: String?

    @Flag(name: .long, help: "Read the keychain password from stdin (one trailing newline is dropped).")
    var passwordStdin = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Read the keychain password from a file (one trailing newline is dropped).", valueName: "path"))
    var passwordFile: String?

    /// The parsed values, as plain data.
    var choice: KeychainChoice {
        KeychainChoice(keychain: keychain, passwordStdin: passwordStdin, passwordFile: passwordFile)
    }

    /// The keychain path chosen by -k, KC_KEYCHAIN or the default.
    var path: String { choice.path }

    func validate() throws { try choice.validate() }
}

/// Which keychain a command uses and where its password comes from, once parsed (by
/// ArgumentParser through `KeychainOptions`, or by `FindFastPath`).
struct KeychainChoice: Equatable {
    /// -k: a path or a name; nil for $KC_KEYCHAIN or the default.
    var keychain: String?
    /// --password-stdin.
    var passwordStdin = false
    /// --password-file.
    var passwordFile: String?

    /// The keychain path chosen by -k, KC_KEYCHAIN or the default.
    var path: String { KeychainLocation.resolve(keychain ?? Environment.get("KC_KEYCHAIN")) }

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

/// The process environment.
enum Environment {
    static func get(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }

    /// Reads a password variable once, overwrites its bytes in this process's environment
    /// (so /proc/self/environ no longer shows it) and removes it, so no child inherits it.
    static func takeSecret(_ name: String) throws -> SecureBytes? {
        guard let raw = getenv(name) else { return nil }
        let count = strlen(raw)
        defer {
            // Wiped and removed even when copying it failed.
            memset(raw, 0, count)
            unsetenv(name)
        }
        return try SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: count))
    }
}
