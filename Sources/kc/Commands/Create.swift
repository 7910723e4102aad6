import ArgumentParser
import KeychainCore
import KeychainClient

/// `kc create`: a new, empty keychain.
struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a keychain (asks for its new password twice on a terminal).",
        discussion: """
            Examples:
              kc create                   # ~/.local/share/kc/login.keychain-db
              kc create work              # ~/.local/share/kc/work.keychain-db
              KC_PASSWORD=... kc create ./ci.keychain-db --kdf interactive

            Exit 48 when the file already exists.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "A path (with a / or ending in .keychain-db), or a NAME for ~/.local/share/kc/NAME.keychain-db (default: -k, $KC_KEYCHAIN, the config file's keychain, login).",
            valueName: "path|name"))
    var target: String?

    @OptionGroup var keychain: KeychainOptions

    @Option(name: Options.createKDF.names, parsing: .unconditional, help: Options.createKDF.help, completion: Options.createKDF.completion)
    var kdf: KDFProfile?

    func run() throws {
        let address = try target.map { try KeychainAddress($0) } ?? keychain.choice.address()
        let path: String
        switch address {
        case .team:
            throw KeychainError(
                errSecParam, "\(address) is a team keychain: kc create makes keychain files",
                hint: "create a team keychain with `kc team create`")
        case .file(let file): path = file
        }
        if KeychainSession.exists(path) {
            throw KeychainError(errSecDuplicateKeychain, "\(path) already exists", hint: "choose another path or name")
        }
        let password = try PasswordSource.forNewKeychain(keychain.choice, path: path)
        _ = try Keychain.create(at: path, password: password, profile: kdf ?? Configuration.kdf)
        Report.note("created the keychain \(path)")
    }
}
