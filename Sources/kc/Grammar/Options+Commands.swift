/// The options that one subcommand has (or that differ by subcommand in their help), by
/// subcommand; `Options.of(_:)` lists which subcommand has which.
extension Options {
    // MARK: add

    static let updateIfExists = OptionSpec("-U", nil, .none, "Update the item if it already exists.")
    /// `--generate` alone: `--generate=default` (`ArgumentNormaliser`).
    static let addGenerate = OptionSpec(
        nil, "--generate", .text,
        "Store a new random secret; SPEC as below (--generate alone: kc generate's defaults).", valueName: "spec",
        candidates: .words(["default", "words", "words:6", "32", "nosymbols", "digitsonly", "letters,digits"]),
        omitted: .init(value: "default", numberFollowing: false))
    static let printGenerated = OptionSpec(nil, "--print", .none, "Print the generated secret once it is stored.")
    static let accessible = OptionSpec(
        nil, "--accessible", .word,
        "When the item can be read: when-unlocked (default), after-first-unlock, always (deprecated), or one of them with -this-device-only, or when-passcode-set-this-device-only; Apple's codes (ck...) too.",
        valueName: "class")
    static let addKDF = OptionSpec(
        nil, "--kdf", .word, "The key-derivation profile if this add creates the default keychain (default: the config file's kdf, else moderate).")
    static let userPresence = OptionSpec(
        nil, "--user-presence", .none,
        "Ask for the keychain password on every read of the secret (access control: user presence).")

    /// `kc add --totp` (`OneTimeOptions`).
    static let totp = OptionSpec(
        nil, "--totp", .none,
        "The secret is a one-time-code seed: an otpauth:// URI or a base32 secret (stored as service otpauth/SERVICE).")
    static let algorithm = OptionSpec(nil, "--algorithm", .word, "With --totp and a base32 secret: SHA1 (default), SHA256 or SHA512.", valueName: "hash")
    static let digits = OptionSpec(nil, "--digits", .number, "With --totp and a base32 secret: 6 (default), 7 or 8 digits.", valueName: "n")
    static let period = OptionSpec(nil, "--period", .number, "With --totp and a base32 secret: the time step in seconds (default 30).", valueName: "seconds")
    static let counter = OptionSpec(
        nil, "--counter", .number,
        "With --totp and a base32 secret: a HOTP (counter) seed whose next code is number N.", valueName: "n")
    static let oneTimeGroup = [totp, algorithm, digits, period, counter]

    // MARK: find

    static let secretOnly = OptionSpec("-w", nil, .none, "Print only the secret (its exact bytes).")
    static let withSecret = OptionSpec("-g", nil, .none, "Print the attributes and the secret.")
    static let hex = OptionSpec(nil, "--hex", .none, "With -w: print the secret as hexadecimal.")
    static let base64 = OptionSpec(nil, "--base64", .none, "With -w: print the secret as base64.")
    static let findJSON = OptionSpec(nil, "--json", .none, "Print items as JSON (an array with --all or --limit).")
    static let findAll = OptionSpec(nil, "--all", .none, "Every matching item, not just the first.")
    static let limit = OptionSpec(nil, "--limit", .number, "At most N matching items.")
    static let findPrompt = OptionSpec(nil, "--prompt", .text, "The text shown when an item requires user presence (kSecUseOperationPrompt).")

    // MARK: generate (GenerateOptions, and its own --count)

    static let length = OptionSpec(nil, "--length", .number, "How many characters (1-4096; default 24).", valueName: "n")
    static let charset = OptionSpec(
        nil, "--charset", .text,
        "The characters to draw from: class names (lower, upper, letters, digits, symbols, alnum) or characters (a-f, !@#), separated by commas.",
        valueName: "spec", candidates: .words(CharacterClass.groupNames))
    static let noSymbols = OptionSpec(nil, "--no-symbols", .none, "Letters and digits only.")
    static let digitsOnly = OptionSpec(nil, "--digits-only", .none, "Digits only (a PIN).")
    static let require = OptionSpec(
        nil, "--require", .text,
        "At least one character of each class: lower, upper, digit, symbol, separated by commas, or none.",
        valueName: "list", candidates: .words(CharacterClass.allCases.map(\.rawValue) + ["none"]))
    static let exclude = OptionSpec(nil, "--exclude", .text, "Characters never to use (quote it for the shell).", valueName: "chars")
    static let words = OptionSpec(nil, "--words", .number, "A passphrase of N words from the EFF list (1-64) instead of characters.", valueName: "n")
    static let separator = OptionSpec(nil, "--separator", .text, "What goes between words (default -).", valueName: "s")
    static let generateGroup = [length, charset, noSymbols, digitsOnly, require, exclude, words, separator]
    static let count = OptionSpec(nil, "--count", .number, "Print N secrets, one a line (1-100000).", valueName: "n")
    static let generateJSON = OptionSpec(nil, "--json", .none, "Print JSON: {\"secret\"} (an array of them with --count above 1).")

    // MARK: update

    static let updateAll = OptionSpec(nil, "--all", .none, "Change every matching item (otherwise more than one match is refused).")
    static let newLabel = OptionSpec(nil, "--new-label", .text, "New label.")
    static let newKind = OptionSpec(nil, "--new-kind", .text, "New kind.")
    static let newComment = OptionSpec(nil, "--new-comment", .text, "New comment.")
    static let newAccount = OptionSpec(nil, "--new-account", .text, "New account name.")
    static let newService = OptionSpec(nil, "--new-service", .text, "New service (the server, for internet passwords).")
    static let newAccessible = OptionSpec(
        nil, "--new-accessible", .word,
        "New accessibility class (as kc add --accessible); the item is sealed again under that class's key.", valueName: "class")
    static let updateUserPresence = OptionSpec(
        nil, "--user-presence", .noneInvertible,
        "Require (or no longer require) the keychain password on every read of the secret.")

    // MARK: delete, move, lock

    static let deleteAll = OptionSpec(nil, "--all", .none, "Delete every matching item (otherwise more than one match is refused).")
    static let yes = OptionSpec(nil, "--yes", .none, "With --all and no attribute: delete every item of the class without asking.")
    static let to = OptionSpec(nil, "--to", .text, "The destination keychain: a path, or a NAME as for -k.", valueName: "path|name")
    static let moveAll = OptionSpec(nil, "--all", .none, "Move every matching item (otherwise more than one match is refused).")
    static let lockAll = OptionSpec(nil, "--all", .none, "Lock every keychain the agents hold (the team agent's too).")

    // MARK: unlock, settings, status

    static let teamTokenFile = OptionSpec(
        nil, "--team-token-file", .text,
        "Unlock the team keychain of a CI runner's token (kcr1:...) read from this file (else $KC_TEAM_TOKEN).", valueName: "path")
    static let unlockTimeout = OptionSpec(
        nil, "--timeout", .number,
        "Lock after this many seconds without use (default: the config file's idle-timeout, else the keychain's setting, 900).",
        valueName: "seconds")
    static let unlockMax = OptionSpec(
        nil, "--max", .number,
        "Lock after this many seconds whatever happens (default: the config file's max-timeout, else the keychain's setting, 43200).",
        valueName: "seconds")
    static let settingsTimeout = OptionSpec("-t", "--timeout", .number, "Idle timeout in seconds.", valueName: "seconds")
    static let settingsMax = OptionSpec(nil, "--max", .number, "Absolute timeout in seconds.", valueName: "seconds")
    static let statusKeychain = OptionSpec(
        "-k", "--keychain", .text,
        "Only this keychain: a path (with a / or ending in .keychain-db), a NAME for ~/.local/share/kc/NAME.keychain-db, or team:NAME.",
        valueName: "path|name")
    static let verifyJSON = OptionSpec(
        nil, "--json", .none, "Print JSON on stdout: {\"path\", \"ok\", \"items\", \"problems\"} (the exit code is the same).")
    static let statusJSON = OptionSpec(nil, "--json", .none, "Print JSON: [{\"path\", \"idle\", \"maximum\"}], seconds left.")

    // MARK: config

    static let configJSON = OptionSpec(
        nil, "--json", .none, "Print JSON: {\"file\", \"exists\", \"settings\": [{\"key\", \"value\", \"source\", ...}]}.")

    // MARK: create, passwd, backup, agent

    static let createKDF = OptionSpec(
        nil, "--kdf", .word,
        "How hard the password is stretched (Argon2id): interactive, moderate or sensitive (default: the config file's kdf, else moderate).")
    static let newPasswordFile = OptionSpec(
        nil, "--new-password-file", .text,
        "Read the new password from a file (one trailing newline is dropped).", valueName: "path")
    static let passwdKDF = OptionSpec(nil, "--kdf", .word, "A new key-derivation profile (default: keep the current one).")
    static let rekey = OptionSpec(nil, "--rekey", .none, "Replace the master key and re-seal every item (the default; accepted for scripts).")
    static let keepMasterKey = OptionSpec(
        nil, "--keep-master-key", .none,
        "Only re-wrap the master key under the new password: old copies of the file then still give it with the old password.")
    static let passwdRecovery = OptionSpec(
        nil, "--recovery", .none,
        "The password is lost: open with the recovery key (a prompt, or --password-stdin / --password-file) and set a new password.")
    static let keyslotRecovery = OptionSpec(nil, "--recovery", .none, "With add: add a recovery key slot (the key is printed once, on stdout).")
    static let keyslotJSON = OptionSpec(nil, "--json", .none, "With list: print the slots as a JSON array of {\"id\", \"kind\", \"created\"}.")
    static let keyslotTPM2 = OptionSpec(
        nil, "--tpm2", .none, "With add: add a TPM2 slot, the keychain's key sealed to this machine's TPM (runs kc-tpm, installed beside kc).")
    static let keyslotPIN = OptionSpec(
        nil, "--pin", .none, "With --tpm2: unsealing needs a PIN (asked twice, or --pin-file); the TPM counts wrong PINs and locks out.")
    static let keyslotPCRs = OptionSpec(
        nil, "--pcrs", .text, "With --tpm2: bind to these PCRs of the SHA-256 bank (e.g. 7 or 0,7): it opens only while they hold today's values.",
        valueName: "list")
    static let pinFile = OptionSpec(
        nil, "--pin-file", .text, "Read the TPM2 slot's PIN from this file (one final newline dropped) instead of the terminal.", valueName: "path")
    static let unlockTPM2Only = OptionSpec(
        nil, "--tpm2-only", .none, "Unlock with the keychain's TPM2 slot and never prompt (a PIN only from --pin-file); for a systemd unit at login or boot.")
    static let unlockRecovery = OptionSpec(
        nil, "--recovery", .none,
        "Unlock with a recovery key instead of the password (typed at a prompt, or from --password-stdin / --password-file).")
    static let backupForce = OptionSpec(nil, "--force", .none, "Replace DEST if it exists (a regular file only).")
    static let stop = OptionSpec(nil, "--stop", .none, "Stop the running agents (the team agent too); every key is wiped.")

    // MARK: export, import, inject

    static let exportClass = OptionSpec(nil, "--class", .word, "Only this class: generic, internet, certificate or key (default: all).")
    static let exportService = OptionSpec("-s", "--service", .text, "Only items with this service (the server, for internet passwords).")
    static let exportAccount = OptionSpec("-a", "--account", .text, "Only items with this account.")
    static let exportLabel = OptionSpec("-l", "--label", .text, "Only items with this label.")
    static let exportFormat = OptionSpec(nil, "--format", .text, "The export format: json (kc's own), bitwarden-json or csv (Bitwarden's CSV).")
    static let exportForce = OptionSpec(nil, "--force", .none, "Write plaintext to a terminal, or replace an existing -o FILE.")
    static let importFormat = OptionSpec(nil, "--format", .text, "The input format (default: detected).", valueName: "format")
    static let importUpdate = OptionSpec(nil, "--update", .none, "Replace existing items that have the same key but other values.")
    static let dryRun = OptionSpec(nil, "--dry-run", .none, "Report what would happen; change nothing.")
    static let importJSON = OptionSpec(nil, "--json", .none, "Print the report as JSON.")
    static let skipInvalid = OptionSpec(nil, "--skip-invalid", .none, "Skip malformed entries (reported) instead of failing the import.")
    static let importKDF = OptionSpec(
        nil, "--kdf", .word, "The key-derivation profile if this import creates the default keychain (default: the config file's kdf, else moderate).")
    static let input = OptionSpec("-i", "--input", .text, "The template file, or - for stdin.", valueName: "template")
    static let injectFormat = OptionSpec(nil, "--format", .text, "How values are written: raw (as they are, the default) or dotenv.")
    static let injectForce = OptionSpec(nil, "--force", .none, "Replace an existing -o FILE.")

    // MARK: list, read, run

    static let listJSON = OptionSpec(nil, "--json", .none, "Print the items as a JSON array of `kc find --json` objects (attributes only).")
    static let readPrompt = OptionSpec(nil, "--prompt", .text, "The text shown when the item requires user presence.")
    static let totpJSON = OptionSpec(
        nil, "--json", .none, "Print JSON: {\"code\", \"type\", \"expires_in\", \"period\"} (never the seed; null for HOTP).")
    static let envFile = OptionSpec(nil, "--env-file", .text, "A dotenv file of NAME=VALUE lines (repeatable).", valueName: "file")
    static let env = OptionSpec(nil, "--env", .text, "NAME=VALUE, usually NAME=kc://SERVICE/ACCOUNT (repeatable).", valueName: "name=ref")
    static let resolveEnv = OptionSpec(
        nil, "--resolve-env", .none,
        "Also resolve kc:// references in the inherited environment (only where every variable is yours).")
    static let noMasking = OptionSpec(nil, "--no-masking", .none, "Never mask the command's output.")
    static let mask = OptionSpec(nil, "--mask", .none, "Mask the command's output even on a terminal.")

    // MARK: aws-credentials

    static let awsImport = OptionSpec(
        nil, "--import", .none, "Move the profile's keys out of ~/.aws/credentials into kc and point ~/.aws/config at kc.")
    static let awsStore = OptionSpec(nil, "--store", .none, "Store the keys given on stdin as AWS's credential_process JSON.")

    // MARK: kube-credential

    static let kubeStore = OptionSpec(nil, "--store", .none, "Store the token given on stdin as NAME's credential.")
    static let kubeExpires = OptionSpec(
        nil, "--expires", .text, "With --store: when the token expires (RFC 3339 in UTC, e.g. 2030-01-31T12:00:00Z).", valueName: "time")
    static let kubeImport = OptionSpec(
        nil, "--import", .none, "Move USER's token or client key out of the kubeconfig KUBECONFIG into kc, an exec stanza in its place.")
    static let kubeBackup = OptionSpec(nil, "--backup", .none, "With --import: keep the old kubeconfig as KUBECONFIG.kc-backup (0600).")
}
