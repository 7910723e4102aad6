import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient

/// `kc read REF`: the secret a reference names, printed as `kc find -w` prints it.
struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the secret a kc:// reference names (as kc find -w).",
        discussion: """
            A reference: kc://SERVICE/ACCOUNT, kc://SERVER/ACCOUNT?class=internet,
            with &keychain=NAME for another keychain; %2F, %3F, %25 escape /, ? and %
            in names (docs/integrations.md). A reference may name only the command's
            keychain (-k, $KC_KEYCHAIN or login) or one given with --allow-keychain.

            Examples:
              kc read kc://github.com/alice
              TOKEN=$(kc read "kc://api.example.com/deploy?class=internet")
              kc read --allow-keychain work "kc://jira/me?keychain=work"
              kc read kc://github.com/alice --clip   # to the clipboard, for 45 s

            Exit 206 for a malformed reference, 44 when nothing matches.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var references: ReferenceOptions
    @OptionGroup var clip: ClipOptions

    @Argument(help: ArgumentHelp("The reference.", valueName: "ref"))
    var reference: String

    @Option(name: Options.readPrompt.names, parsing: .unconditional, help: Options.readPrompt.help, completion: Options.readPrompt.completion)
    var prompt: String?

    func run() throws {
        PresenceSource.reason = prompt
        try Self.print(reference, keychain.choice, allowed: references.allowedKeychains, clip: clip.seconds)
    }

    /// `kc read REF` with no options, parsed without ArgumentParser (its start-up is most of
    /// a read through the agent, docs/performance.md).
    static func fast(_ reference: String) throws {
        try print(reference, KeychainChoice(), allowed: [])
    }

    private static func print(_ reference: String, _ choice: KeychainChoice, allowed: [String], clip: Int? = nil) throws {
        let ref = try SecretReference(reference)
        let secrets = try ReferenceResolver.resolve([ref], base: choice, allowed: allowed) { _ in reference }
        guard let secret = secrets.first else { return }
        if let clip {
            try Clipboard.copy(secret: secret.bytes, clearAfter: clip)
            return
        }
        secret.bytes.withUnsafeBytes { SecretOutput.write($0) }
    }
}
