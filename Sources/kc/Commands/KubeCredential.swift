import ArgumentParser
import KeychainCore

/// `kc kube-credential`: declared here for help, completion and the man page; `KC.main`
/// runs it without ArgumentParser (`KubeCredentialHelper`), as kubectl starts it on every
/// request.
struct KubeCredential: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: KubeCredentialHelper.word,
        abstract: "kubectl's exec credential plugin: a kubeconfig user's token or client key from kc.",
        discussion: """
            In a kubeconfig user's exec stanza:  command: kc,
            args: [kube-credential, NAME], with apiVersion
            client.authentication.k8s.io/v1beta1 (or v1), it prints an
            ExecCredential (in the apiVersion kubectl sent) with the token, or the
            client certificate and key, of the generic password with service
            kube:NAME.

            Examples:
              printf %s "$TOKEN" | kc kube-credential dev --store   # token on stdin
              kc kube-credential --import ~/.kube/config dev        # out of the file
              kc kube-credential dev                                # what kubectl runs

            Failures are one line on stderr, which kubectl shows; usage errors exit 2,
            36 when the keychain is locked and no password can be asked for (run
            `kc unlock`). docs/integrations.md, "kubectl".
            """
    )

    @Option(name: Options.keychain.names, parsing: .unconditional, help: Options.keychain.help, completion: Options.keychain.completion)
    var keychain: String?

    @Option(name: Options.passwordFile.names, parsing: .unconditional, help: Options.passwordFile.help, completion: Options.passwordFile.completion)
    var passwordFile: String?

    @Flag(name: Options.kubeStore.names, help: Options.kubeStore.help)
    var store = false

    @Option(name: Options.kubeExpires.names, help: Options.kubeExpires.help)
    var expires: String?

    @Flag(name: Options.kubeImport.names, help: Options.kubeImport.help)
    var importUser = false

    @Flag(name: Options.kubeBackup.names, help: Options.kubeBackup.help)
    var backup = false

    @Argument(help: ArgumentHelp("NAME, the credential's name; with --import, KUBECONFIG USER.", valueName: "name"))
    var words: [String]

    /// The words `KubeCredentialHelper` reads, in its order.
    func run() throws {
        var arguments: [String] = []
        if let keychain { arguments += ["--keychain", keychain] }
        if let passwordFile { arguments += ["--password-file", passwordFile] }
        if importUser {
            arguments += ["--import"] + words + (backup ? ["--backup"] : [])
        } else {
            arguments += words + (store ? ["--store"] : []) + (expires.map { ["--expires", $0] } ?? [])
        }
        Startup.exit(KubeCredentialHelper.run(arguments[...]))
    }
}
