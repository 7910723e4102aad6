import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc run`: a command with secrets in its environment, resolved from kc:// references.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with kc:// references in its environment replaced by their secrets.",
        discussion: """
            A kc:// reference is resolved where the command line or an --env-file
            put it: a variable given with --env NAME=kc://..., or set by a line of an
            --env-file. The inherited environment is passed on as it is, references
            included, unless --resolve-env is given: in CI, variables such as a merge
            request's title come from others, and one set to kc://prod-db/admin must
            not receive that secret. A reference may name (?keychain=) only the
            command's keychain or one given with --allow-keychain.

            The secrets are in CMD's environment. All references are resolved before
            CMD starts, one agent round trip per keychain; if one fails, CMD does not
            start and the error names the variable. CMD runs with its exact
            arguments, no shell. KC_PASSWORD and KC_NEW_PASSWORD never reach it.
            SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to kc reach
            CMD; kc exits with CMD's status, 128+N if it died of signal N.

            When stdout or stderr is not a terminal (a CI log), each secret CMD
            prints there is replaced by <concealed by kc>; --no-masking and --mask
            override. Bytes that may start a secret are held back until the output
            shows they do not, or ends.

            Examples:
              kc run --env GITHUB_TOKEN=kc://github.com/ci -- gh release list
              kc run --env-file .env.kc -- docker compose up
              DB_PASSWORD=kc://db/app kc run --resolve-env -- ./migrate --yes
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var references: ReferenceOptions

    @Option(name: Options.envFile.names, parsing: .unconditionalSingleValue, help: Options.envFile.help, completion: Options.envFile.completion)
    var envFiles: [String] = []

    @Option(name: Options.env.names, parsing: .unconditionalSingleValue, help: Options.env.help, completion: Options.env.completion)
    var envPairs: [String] = []

    @Flag(name: Options.resolveEnv.names, help: Options.resolveEnv.help)
    var resolveEnv = false

    @Flag(name: Options.noMasking.names, help: Options.noMasking.help)
    var noMasking = false

    @Flag(name: Options.mask.names, help: Options.mask.help)
    var mask = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "cmd"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the command after --: kc run [options] -- CMD [ARGS...]") }
        if noMasking && mask { throw ValidationError("choose one of --mask and --no-masking") }
        for pair in envPairs where !pair.contains("=") || !DotEnv.isName(String(pair.split(separator: "=", maxSplits: 1)[0])) {
            throw ValidationError("--env takes NAME=VALUE, not \"\(pair)\"")
        }
    }

    /// The parsed values, as plain data.
    var request: RunRequest {
        RunRequest(
            keychain: keychain.choice, allowedKeychains: references.allowedKeychains, envFiles: envFiles,
            envPairs: envPairs, resolveEnv: resolveEnv, noMasking: noMasking, mask: mask, command: command)
    }

    func run() throws { try request.run() }
}
