import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// The `kc` command: parses arguments into query dictionaries for KeychainCore and prints
/// results for terminals, scripts and CI. No SQL or libsodium here.
@main
struct KC: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "kc",
        abstract: "A command-line secrets manager: Apple's Keychain Services on an encrypted SQLite file.",
        discussion: """
            Examples:
              kc add -s github.com -a alice       # the secret from a prompt or stdin
              kc find -s github.com -a alice -w   # only the secret, for scripts
              kc find -s github.com               # attributes, never the secret
              kc update -s github.com -a alice    # a new secret
              kc delete -s github.com -a alice

            The keychain: -k PATH|NAME, else $KC_KEYCHAIN, else the configuration
            file's (~/.config/kc/config; `kc config` shows what is in force), else
            ~/.local/share/kc/login.keychain-db. Its password: $KC_PASSWORD,
            --password-stdin, --password-file, or a prompt on the terminal
            (three tries), which also unlocks it in the kc agent, as `kc unlock`
            does, until it locks (KC_UNLOCK_ON_PROMPT=0: not).

            Exit codes: 0 success, 1 kc import skipped entries, 2 usage error, else
            the low byte of Apple's status (the common ones here; `man kc` and
            docs/errors.md list every one):
              22 not established as the real kc agent; nothing sent (errSecCSReqFailed)
              28 removed from a team keychain, its log shows (errSecRestrictedAPI)
              36 locked, no way to ask for the password (errSecInteractionNotAllowed)
              41 attribute not valid for the class (errSecNoSuchAttr)
              42 secret or value too large (errSecDataTooLarge)
              44 no item matches (errSecItemNotFound)
              45 the item already exists (errSecDuplicateItem)
              48 the keychain already exists (errSecDuplicateKeychain)
              49 a team keychain's server rolled back or forked (errSecInvalidKeychain)
              50 no such keychain (errSecNoSuchKeychain)
              51 wrong password (errSecAuthFailed)
              52 read-only file, or no permission to write (errSecReadOnly)
              53 file busy, or no way to copy to the clipboard (errSecNotAvailable)
              93 damaged, tampered or not a kc keychain (errSecDecode)
              128 cancelled by the user (errSecUserCanceled)
              206 bad parameter, or an empty password from a script (errSecParam)

            `kc error CODE` prints any status's message; docs/errors.md lists them all.
            """,
        version: "kc \(version) (libsodium \(LibraryVersions.sodium), SQLite \(LibraryVersions.sqlite))",
        subcommands: [
            Add.self, Find.self, List.self, Generate.self, Update.self, Delete.self, Move.self, Unlock.self, Lock.self, Status.self, Create.self, Passwd.self,
            Settings.self, Backup.self, Verify.self, Export.self, Import.self, Read.self, Totp.self, Run.self, Inject.self, SecretServiceCommand.self,
            TeamCommand.self, ConfigCommand.self, ErrorCommand.self, Agent.self,
            AWSCredentials.self,
            KubeCredential.self, SSHAgentCommand.self, SSHCommand.self, KeySlotCommand.self
        ]
    )

    /// ArgumentParser answers `--generate-completion-script SHELL` itself, before parsing
    /// (`make install` runs it); declared only so that `kc --help` and the man page list it.
    @Option(name: Options.generateCompletionScript.names, help: Options.generateCompletionScript.help, completion: Options.generateCompletionScript.completion)
    var generateCompletionScript: String?

    static func main() {
        // `kc team …` is kc-team's: exec'd before kc takes KC_PASSWORD and KC_TEAM_TOKEN out
        // of the environment, so kc-team gets them as kc was given them.
        let all = CommandLine.arguments
        if all.count > 2, all[1] == TeamCommand.word, !["--help", "-h"].contains(all[2]) {
            do { try TeamCommand.exec(all.dropFirst(2)) } catch let error as KeychainError { Report.fail(error) } catch { Startup.exit(1) }
        }
        // `kc ssh-agent …` and `kc ssh …` are kc-ssh's, exec'd the same way (docs/ssh.md).
        if let argv = SSHCommand.passedOn(all) {
            do { try SSHCommand.exec(argv) } catch let error as KeychainError { Report.fail(error) } catch { Startup.exit(1) }
        }
        Startup.prepare()
        // `kc` alone: a short usage on stderr, exit 2 (git's and pass's way), not the full help.
        // A credential helper that prints its own usage alone (Vault's) prints that.
        let name = all.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "kc"
        let helper = CredentialHelpers.program(name)
        if all.count == 1 && helper?.ownUsageWhenAlone != true { ShortUsage.fail() }
        do {
            try Startup.checkArgumentsAreUTF8()
            var arguments = CommandLine.arguments
            // A credential helper started by the name kc was started under (`CredentialHelpers`).
            if let helper {
                helper.prepare?()
                if helper.checksConfiguration { try Configuration.check() }
                Startup.exit(helper.run(arguments.dropFirst()))
            }
            // The process that clears a copied secret (`kc find -w --clip`), started by kc itself.
            if arguments.count > 1, arguments[1] == ClipboardKeeper.subcommand { Startup.exit(ClipboardKeeper.run(arguments.dropFirst(2))) }
            // One pass, and every parser below reads its output: leading keychain options
            // moved after the subcommand, `--clip` alone as `--clip=45`, `-s --` as `-s=--`.
            arguments = try ArgumentNormaliser.normalised(arguments)
            // A configuration file that is unsafe or malformed stops the command before it
            // does anything (docs/config.md). Decided on the normalised words, so that a
            // leading `-k NAME` does not hide the command; what never reads the file
            // (`Startup.ignoresConfiguration`) goes on, and help is checked after parsing,
            // so that only a command that then runs stops.
            let ignoresConfiguration = Startup.ignoresConfiguration(arguments)
            let asksForHelp = Startup.asksForHelp(arguments)
            if !ignoresConfiguration && !asksForHelp { try Configuration.check() }
            // A fast path below prints no help: it runs, so it meets the file's check first.
            func checkIfDeferred() throws { if asksForHelp && !ignoresConfiguration { try Configuration.check() } }
            // A credential helper started as `kc [-k KEYCHAIN] WORD …` (`CredentialHelpers`),
            // the keychain option moved after the word. Most print no help: `get --help`
            // runs (and `store` writes).
            if let helper = CredentialHelpers.subcommand(arguments, asksForHelp: asksForHelp) {
                if helper.checksConfiguration { try checkIfDeferred() }
                Startup.exit(helper.run(arguments.dropFirst(2)))
            }
            // The commands scripts repeat skip ArgumentParser's start-up cost: `kc read REF`
            // alone, `kc run`'s and `kc find`'s plain forms.
            if arguments.count == 3, arguments[1] == "read", !arguments[2].hasPrefix("-") {
                try checkIfDeferred()
                try Read.fast(arguments[2])
                Startup.exit(0)
            }
            if arguments.count > 2, arguments[1] == "run", let run = RunFastPath.parse(arguments.dropFirst(2)) {
                try checkIfDeferred()
                try run.run()
            }
            if arguments.count > 1, arguments[1] == "find", let find = FindFastPath.parse(arguments.dropFirst(2)) {
                try checkIfDeferred()
                try find.run()
            } else {
                if arguments.count > 1, let message = CommandSuggestion.message(for: arguments[1]) {
                    Report.usage(message)
                    Startup.exit(2)
                }
                var command = try parseAsRoot(Array(arguments.dropFirst()))
                // `--help` parses as ArgumentParser's own `help` command, which prints it.
                if type(of: command).configuration.commandName != "help" { try checkIfDeferred() }
                try command.run()
            }
            Startup.exit(0)
        } catch let error as KeychainError {
            Report.fail(error)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // Help, or a completion's candidates (none: print nothing at all).
                // Its usage wrapped to fit 80 columns (ArgumentParser writes it on one line).
                let message = UsageText.wrappingUsage(in: fullMessage(for: error), width: TerminalWidth.stdoutColumns ?? UsageText.maximumWidth)
                if !message.isEmpty { Report.out(message + "\n") }
                Startup.exit(0)
            }
            // In kc's voice: `kc: MESSAGE`, `kc: hint: …` (not ArgumentParser's `Error:`/`Usage:`).
            Report.usage(
                UsageText.voiced(
                    fullMessage(for: error), message: message(for: error), program: "kc", arguments: Array(CommandLine.arguments.dropFirst())))
            // Usage errors exit 2 (ArgumentParser's default is 64).
            Startup.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}
