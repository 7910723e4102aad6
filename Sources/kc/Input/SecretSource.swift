import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Where an item's secret came from (`SecretOptions`), and the two rules every source
/// shares: an empty secret is refused unless `--allow-empty` asks for it, and a secret from
/// stdin or a file that ends in a newline is stored as given, with a warning when someone
/// is at the terminal to read it.
///
///     let source = SecretSource.stdin
///     try source.checkNotEmpty(count: 0, allowEmpty: false)   // throws errSecParam (exit 206)
enum SecretSource: Equatable {
    /// `-w VALUE` / `--secret VALUE`.
    case argument
    /// `--data-file PATH`.
    case file(String)
    /// stdin when it is not a terminal.
    case stdin
    /// Typed at the prompt on the terminal.
    case prompt

    /// Refuses an empty secret unless `allowEmpty`: an empty `-w "$UNSET"`, an empty file,
    /// an empty pipe or Enter at the prompt is nearly always a mistake, and an empty secret
    /// stored by mistake is only found when it is used.
    /// - Throws: errSecParam (exit 206), naming the source and `--allow-empty`.
    func checkNotEmpty(count: Int, allowEmpty: Bool) throws {
        guard count == 0, !allowEmpty else { return }
        let onPurpose = "add --allow-empty to store an empty secret on purpose"
        switch self {
        case .argument:
            throw KeychainError(errSecParam, "the secret given with -w is empty", hint: "is the variable set? \(onPurpose)")
        case .file(let path):
            throw KeychainError(errSecParam, "the data file \(path) is empty", hint: onPurpose)
        case .stdin:
            throw KeychainError(
                errSecParam, "the secret on stdin is empty",
                hint: "pipe the secret in (printf %s \"$TOKEN\" | kc add ...), or \(onPurpose)")
        case .prompt:
            throw KeychainError(errSecParam, "the secret typed at the prompt is empty; nothing was changed", hint: onPurpose)
        }
    }

    /// The warning for a secret from stdin or a file that ends in a newline (`echo` and
    /// most editors add one), when stderr is a terminal: the bytes are stored exactly as
    /// given (scripts rely on that), but the person who typed the command is told. Nil
    /// otherwise: nothing is printed into a script's log.
    func newlineWarning(endsInNewline: Bool, stderrIsTerminal: Bool = isatty(2) == 1) -> (warning: String, hint: String)? {
        guard endsInNewline, stderrIsTerminal else { return nil }
        switch self {
        case .stdin:
            return (
                "warning: the secret from stdin ends in a newline, which was stored as part of it",
                "echo adds one; printf %s \"$SECRET\" | kc update ... stores the secret without it"
            )
        case .file(let path):
            return (
                "warning: the data file \(path) ends in a newline, which was stored as part of the secret",
                "if it is not meant, remove it (truncate -s -1 \(path)) and run kc update ... --data-file \(path)"
            )
        case .argument, .prompt:
            return nil
        }
    }
}
