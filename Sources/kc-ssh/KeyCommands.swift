import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kc ssh add|generate|list|export-public …`: SSH keys kept as kc key items (docs/ssh.md,
/// "Keys in the keychain" and "Importing and generating").
enum KeyCommands {
    /// The subcommands of `kc ssh`.
    static let words: Set<String> = ["add", "generate", "list", "export-public"]

    /// Each command's usage, as `--help` prints it and a usage error's hint names.
    static let usages: [String: String] = [
        "add": """
        usage: kc ssh add FILE [--name NAME] [--passphrase-file FILE] [--user-presence] [-k KEYCHAIN]
          Imports an OpenSSH or PEM private key (Ed25519, ECDSA P-256/384/521, RSA of 2048
          to 16384 bits) as a key item. An encrypted key asks for its passphrase on the
          terminal, or reads it from --passphrase-file (one line). NAME defaults to the
          key's comment, else the file's name; it is the comment `kc ssh list` shows.
          --user-presence: the SSH agent asks for the keychain's password before every
          signature with the key.
        """,
        "generate": """
        usage: kc ssh generate NAME [--type ed25519|ecdsa|rsa] [--bits N] [--user-presence] [-k KEYCHAIN]
          Makes a key inside kc (default Ed25519; ecdsa: P-256, --bits 384 or 521 for the
          other curves; rsa: 3072 bits, --bits 2048-16384) and prints its public key.
        """,
        "list": """
        usage: kc ssh list [-k KEYCHAIN]
          Prints the public keys kept in the keychain as `ssh-add -L` does: TYPE BASE64 NAME.
        """,
        "export-public": """
        usage: kc ssh export-public NAME [-k KEYCHAIN]
          Prints the public key NAME as one authorized_keys line.
        """
    ]

    /// Runs `kc ssh ARGUMENTS`; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        let word = arguments[0]
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(usages[word] ?? "")
            return 0
        }
        // It holds private keys, passphrases and perhaps a keychain's password: no core file,
        // not readable by the user's other processes (docs/security.md, "Memory").
        ProcessHardening.disableCoreDumps()
        KeychainPassword.takeEnvironment()
        do {
            switch word {
            case "add": try AddKey(try KeyArguments(rest, command: word)).run()
            case "generate": try GenerateKey(try KeyArguments(rest, command: word)).run()
            case "list": try ListKeys(try KeyArguments(rest, command: word)).run()
            default: try ExportPublicKey(try KeyArguments(rest, command: word)).run()
            }
            return 0
        } catch let usage as UsageError {
            say(usage.message)
            say("hint: see 'kc ssh \(word) --help' for more information.")
            return 2
        } catch let error as KeychainError {
            say(error.message)
            if let hint = error.hint { say("hint: " + hint) }
            return exitCode(for: error.status)
        } catch {
            say("\(error)")
            return 1
        }
    }

    /// Writes `kc: TEXT` to standard error, its control characters escaped.
    static func say(_ text: String) {
        complain("kc: " + TerminalSafe.escaped(text) + "\n")
    }

    /// Writes `text` and a line end to standard output.
    static func output(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// A usage error: said as `kc: MESSAGE` with a hint to `--help`, exit 2.
struct UsageError: Error {
    var message: String
}
