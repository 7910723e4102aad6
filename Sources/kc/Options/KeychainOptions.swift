import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Which keychain a command uses and where its password comes from.
struct KeychainOptions: ParsableArguments {
    @Option(name: [.customShort("k"), .long], parsing: .unconditional, help: ArgumentHelp(
        "The keychain: a path (with a / or ending in .keychain-db), a NAME for ~/.local/share/kc/NAME.keychain-db, or team:NAME (a team keychain). Default: $KC_KEYCHAIN, else login.",
        valueName: "path|name"), completion: .custom { CompletionCandidates.keychains($0, $1, $2) })
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
