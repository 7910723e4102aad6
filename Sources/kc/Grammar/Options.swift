/// kc's command-line grammar: every option, declared once (`OptionSpec`), and the options of
/// each subcommand (`of(_:)`).
///
/// The options that several subcommands share are here, by group (`KeychainOptions`,
/// `ItemOptions`, ...); those of one subcommand are in `Options+Commands.swift`. Two
/// entries may share a spelling only when no subcommand has both (`--all` of find and of
/// delete): GrammarTests checks that, and that each subcommand's list is exactly what its
/// ArgumentParser declarations give (`kc SUBCOMMAND --experimental-dump-help`).
enum Options {
    // MARK: The keychain (KeychainOptions): every subcommand that opens one.

    static let keychain = OptionSpec(
        "-k", "--keychain", .text,
        "The keychain: a path (with a / or ending in .keychain-db), a NAME for ~/.local/share/kc/NAME.keychain-db, or team:NAME (a team keychain). Default: $KC_KEYCHAIN, else the config file's keychain, else login.",
        valueName: "path|name", candidates: .keychains)
    static let passwordStdin = OptionSpec(
        nil, "--password-stdin", .none,
        "Read the keychain password from stdin (one trailing newline is dropped).")
    static let passwordFile = OptionSpec(
        nil, "--password-file", .text,
        "Read the keychain password from a file (one trailing newline is dropped).", valueName: "path")

    /// `KeychainOptions`; these may also come before the subcommand (`kc -k work backup DEST`).
    static let keychainGroup = [keychain, passwordStdin, passwordFile]

    // MARK: An item's attributes (ItemOptions), named as macOS `security`'s.

    static let itemClass = OptionSpec(nil, "--class", .word, "The item class: generic (default), internet, certificate or key.")
    static let account = OptionSpec("-a", "--account", .text, "Account name.", candidates: .accounts)
    static let service = OptionSpec("-s", "--service", .text, "Service name (the server, for internet passwords).", candidates: .services)
    static let label = OptionSpec("-l", "--label", .text, "Label (default on add: the service or server).")
    static let kind = OptionSpec("-D", "--kind", .text, "Kind (kSecAttrDescription).")
    static let comment = OptionSpec("-j", "--comment", .text, "Comment.")
    static let generic = OptionSpec("-G", "--generic", .text, "Generic attribute (generic passwords).")
    static let creator = OptionSpec("-c", "--creator", .text, "Creator: a four-character code or a number.", valueName: "code")
    static let type = OptionSpec("-C", "--type", .text, "Type: a four-character code or a number.", valueName: "code")
    static let securityDomain = OptionSpec("-d", "--security-domain", .text, "Security domain (internet passwords).")
    static let path = OptionSpec("-p", "--path", .text, "Path (internet passwords).")
    static let port = OptionSpec("-P", "--port", .number, "Port number (internet passwords).")
    static let `protocol` = OptionSpec(
        "-r", "--protocol", .text,
        "Protocol (internet passwords): https, http, ftp, ssh, smtp, imap... or a four-character code such as htps.", valueName: "protocol")
    static let authType = OptionSpec(
        "-t", "--auth-type", .text,
        "Authentication type (internet passwords): default, basic, digest, form, ntlm, or a four-character code. Default on add: default (dflt).",
        valueName: "type")
    static let tag = OptionSpec(nil, "--tag", .text, "Application tag (keys).")

    /// `ItemOptions`.
    static let itemGroup = [
        itemClass, account, service, label, kind, comment, generic, creator, type, securityDomain,
        path, port, `protocol`, authType, tag
    ]

    // MARK: How text attributes match (MatchOptions): find, update, delete and move.

    static let ignoreCase = OptionSpec(
        nil, "--ignore-case", .none,
        "Compare text attributes ignoring case (a kc extension: scans and decrypts the class).")
    static let contains = OptionSpec(
        nil, "--contains", .none,
        "Text attributes match when they contain the text given (-s git finds github.com; a kc extension: scans and decrypts the class).")
    static let prefix = OptionSpec(
        nil, "--prefix", .none,
        "Text attributes match when they start with the text given (a kc extension: scans and decrypts the class).")

    /// `MatchOptions`.
    static let matchGroup = [ignoreCase, contains, prefix]

    // MARK: Shared by a few.

    /// `ClipOptions`: find, read, totp and generate.
    static let clip = OptionSpec(
        nil, "--clip", .number,
        "Copy the secret to the clipboard instead of printing it; clear it after seconds (if only --clip: the config file's clip-seconds, else 45) if it is still there.",
        valueName: "seconds", omitted: .init(value: String(Clipboard.defaultSeconds), numberFollowing: true))

    /// `ReferenceOptions`: read, run, inject and totp.
    static let allowKeychain = OptionSpec(
        nil, "--allow-keychain", .text,
        "Another keychain (path or name) that references may name with ?keychain= (repeatable).",
        valueName: "path|name", candidates: .keychains)

    /// `SecretOptions`: where add and update take the secret from.
    static let secret = OptionSpec(
        "-w", "--secret", .text,
        "The secret itself. Others can see it in `ps` until kc overwrites it, and in shell history: prefer stdin or --data-file.",
        valueName: "value")
    static let dataFile = OptionSpec(nil, "--data-file", .text, "Read the secret from a file (exact bytes; binary is fine).", valueName: "path")
    static let allowEmpty = OptionSpec(nil, "--allow-empty", .none, "Store an empty secret (refused otherwise, from every source).")

    /// `SecretOptions`.
    static let secretGroup = [secret, dataFile, allowEmpty]

    /// `kc -o FILE`: export and inject.
    static let output = OptionSpec("-o", "--output", .text, "Write to FILE (created 0600) instead of stdout.", valueName: "file")

    /// `kc --generate-completion-script SHELL`, kc's only option of its own.
    static let generateCompletionScript = OptionSpec(
        nil, "--generate-completion-script", .text,
        "Print the completion script for bash, zsh or fish (make install installs them).",
        valueName: "shell", candidates: .words(["bash", "zsh", "fish"]))

    // MARK: The grammar

    /// The subcommands, by the name typed (hidden ones included).
    static let subcommands = [
        "add", "find", "list", "generate", "update", "delete", "move", "unlock", "lock", "status",
        "create", "passwd", "settings", "backup", "verify", "export", "import", "read", "totp",
        "run", "inject", "secret-service", "team", "config", "error", "agent",
        "aws-credentials",
        "kube-credential", "ssh-agent", "ssh", "keyslot"
    ]

    /// The options of `kc COMMAND` (`kc` itself for the options before any subcommand), in
    /// the order its help lists them; none for a word that is no subcommand.
    static func of(_ command: String) -> [OptionSpec] {
        switch command {
        case "kc": return [generateCompletionScript]
        case "add": return Grammar.add
        case "find": return Grammar.find
        case "list": return Grammar.list
        case "generate": return Grammar.generate
        case "update": return Grammar.update
        case "delete": return Grammar.delete
        case "move": return Grammar.move
        case "unlock": return Grammar.unlock
        case "lock": return Grammar.lock
        case "status": return Grammar.status
        case "create": return Grammar.create
        case "passwd": return Grammar.passwd
        case "settings": return Grammar.settings
        case "backup": return Grammar.backup
        case "verify": return keychainGroup + [verifyJSON]
        case "export": return Grammar.export
        case "import": return Grammar.import
        case "read": return Grammar.read
        case "totp": return Grammar.totp
        case "run": return Grammar.run
        case "inject": return Grammar.inject
        case "config": return [keychain, configJSON]
        case "agent": return [stop]
        case "aws-credentials": return [keychain, passwordFile, awsImport, awsStore]
        case "kube-credential": return [keychain, passwordFile, kubeStore, kubeExpires, kubeImport, kubeBackup]
        case "keyslot": return Grammar.keyslot
        default: return []
        }
    }

    /// Each subcommand's list, built once.
    private enum Grammar {
        static let add =
            keychainGroup + itemGroup + secretGroup + oneTimeGroup
            + [updateIfExists, addGenerate, printGenerated, accessible, addKDF, userPresence]
        static let find =
            keychainGroup + itemGroup
            + [secretOnly, withSecret, hex, base64, findJSON, findAll, limit, findPrompt] + matchGroup + [clip]
        static let list = keychainGroup + itemGroup + [listJSON]
        static let generate = generateGroup + [clip, count, generateJSON]
        static let update =
            keychainGroup + itemGroup + matchGroup + secretGroup
            + [updateAll, newLabel, newKind, newComment, newAccount, newService, newAccessible, updateUserPresence]
        static let delete = keychainGroup + itemGroup + matchGroup + [deleteAll, yes]
        static let move = keychainGroup + itemGroup + matchGroup + [to, moveAll]
        static let unlock = [teamTokenFile] + keychainGroup + [unlockTimeout, unlockMax, unlockRecovery, unlockTPM2Only, pinFile]
        static let lock = keychainGroup + [lockAll]
        static let status = [statusKeychain, statusJSON]
        static let create = keychainGroup + [createKDF]
        static let passwd = keychainGroup + [newPasswordFile, passwdKDF, rekey, keepMasterKey, passwdRecovery]
        static let keyslot = keychainGroup + [keyslotRecovery, keyslotTPM2, keyslotPIN, keyslotPCRs, pinFile, keyslotJSON]
        static let settings = keychainGroup + [settingsTimeout, settingsMax]
        static let backup = keychainGroup + [backupForce]
        static let export = keychainGroup + [exportClass, exportService, exportAccount, exportLabel, output, exportFormat, exportForce]
        static let `import` = keychainGroup + [importFormat, importUpdate, dryRun, importJSON, skipInvalid, importKDF]
        static let read = keychainGroup + [allowKeychain, clip, readPrompt]
        static let totp = keychainGroup + itemGroup + [allowKeychain, clip, totpJSON]
        static let run = keychainGroup + [allowKeychain, envFile, env, resolveEnv, noMasking, mask]
        static let inject = keychainGroup + [allowKeychain, input, output, injectFormat, injectForce]
    }

    /// The option of `command` that `name` names, if any.
    static func named(_ name: Substring, in command: String) -> OptionSpec? {
        for option in of(command) where option.isNamed(name) { return option }
        return nil
    }

    /// Whether `name` takes a value in `command`: as `command` declares it; for a name
    /// `command` does not have, as the subcommands that have it agree it does (`-w` is a
    /// value in add and a flag in find, so it takes none elsewhere). ArgumentParser then
    /// refuses the unknown option with the value it would have had.
    static func takesValue(_ name: Substring, in command: String) -> Bool {
        if let option = named(name, in: command) { return option.takesValue }
        var found = false
        for other in subcommands {
            guard let option = named(name, in: other) else { continue }
            if !option.takesValue { return false }
            found = true
        }
        return found
    }
}
