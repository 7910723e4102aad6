import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Which keychain a command uses and where its password comes from.
struct KeychainOptions: ParsableArguments {
    @Option(name: Options.keychain.names, parsing: .unconditional, help: Options.keychain.help, completion: Options.keychain.completion)
    var keychain: String?

    @Flag(name: Options.passwordStdin.names, help: Options.passwordStdin.help)
    var passwordStdin = false

    @Option(name: Options.passwordFile.names, parsing: .unconditional, help: Options.passwordFile.help, completion: Options.passwordFile.completion)
    var passwordFile: String?

    /// The parsed values, as plain data.
    var choice: KeychainChoice {
        KeychainChoice(keychain: keychain, passwordStdin: passwordStdin, passwordFile: passwordFile)
    }

    /// The keychain path chosen by -k, KC_KEYCHAIN or the default.
    var path: String { choice.path }

    func validate() throws { try choice.validate() }
}
