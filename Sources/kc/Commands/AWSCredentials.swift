import ArgumentParser
import KeychainCore

/// `kc aws-credentials`: declared here for help, completion and the man page; `KC.main`
/// runs it without ArgumentParser (`AWSCredentialProcess`), as AWS starts it on every call.
struct AWSCredentials: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aws-credentials",
        abstract: "AWS's credential_process: a profile's keys from kc (docs/integrations.md).",
        discussion: """
            In ~/.aws/config:  credential_process = kc aws-credentials PROFILE
            prints {"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken",
            "Expiration"} from the generic password with service aws:PROFILE.

            Examples:
              kc aws-credentials --import prod     # out of ~/.aws/credentials, into kc
              kc aws-credentials --store ci < keys.json   # AWS's JSON on stdin
              kc aws-credentials prod              # what AWS runs

            AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name the files, as for AWS.
            Exit 44 when kc has no keys for the profile, 45 when --import finds
            different keys for it in the two files (nothing changed), 36 when the
            keychain is locked and no password can be asked for (run `kc unlock`).
            """
    )

    @Option(name: Options.keychain.names, parsing: .unconditional, help: Options.keychain.help, completion: Options.keychain.completion)
    var keychain: String?

    @Option(name: Options.passwordFile.names, parsing: .unconditional, help: Options.passwordFile.help, completion: Options.passwordFile.completion)
    var passwordFile: String?

    @Flag(name: Options.awsImport.names, help: Options.awsImport.help)
    var importKeys = false

    @Flag(name: Options.awsStore.names, help: Options.awsStore.help)
    var store = false

    @Argument(help: ArgumentHelp("The AWS profile, as --profile names it (`default` for the default one).", valueName: "profile"))
    var profile: String

    func validate() throws {
        if importKeys && store { throw ValidationError("--import and --store exclude each other") }
    }

    func run() throws {
        let choice = KeychainChoice(keychain: keychain, passwordStdin: false, passwordFile: passwordFile)
        try choice.validate()
        let mode: AWSCredentialProcess.Mode = importKeys ? .importKeys : store ? .store : .get
        Startup.exit(AWSCredentialProcess.reporting { try AWSCredentialProcess.run(mode, choice, profile) })
    }
}
