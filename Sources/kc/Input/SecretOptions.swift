import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Where an item's secret comes from: `-w VALUE`, `--data-file PATH`, stdin when it is
/// not a terminal (exact bytes, nothing stripped), or a prompt on the terminal. An empty
/// secret is refused from every one of them unless `--allow-empty` is given
/// (`SecretSource`).
struct SecretOptions: ParsableArguments {
    @Option(name: Options.secret.names, parsing: .unconditional, help: Options.secret.help, completion: Options.secret.completion)
    var secret: String?

    @Option(name: Options.dataFile.names, parsing: .unconditional, help: Options.dataFile.help, completion: Options.dataFile.completion)
    var dataFile: String?

    @Flag(name: Options.allowEmpty.names, help: Options.allowEmpty.help)
    var allowEmpty = false

    func validate() throws {
        if secret != nil && dataFile != nil {
            throw ValidationError("-w and --data-file are two sources for one secret; give one")
        }
    }

    /// Overwrites `-w VALUE` in this process's argv (what /proc/PID/cmdline and `ps` show),
    /// so the secret is visible there only for the moment before kc starts running.
    func scrubArgv() {
        guard let secret, !secret.isEmpty else { return }
        let value = Array(secret.utf8)
        for i in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[i] else { continue }
            let length = strlen(raw)
            let bytes = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: UInt8.self)
            let arg = Array(UnsafeBufferPointer(start: bytes, count: length))
            // "-w VALUE", "--secret VALUE", "--secret=VALUE", "-wVALUE", "-UwVALUE" (getopt's
            // grouped form, which ArgumentNormaliser splits)
            let grouped = arg.count > value.count + 2 && arg.starts(with: [0x2D]) && arg[1] != 0x2D && arg[arg.count - value.count - 1] == UInt8(ascii: "w")
            if arg.count >= value.count, Array(arg.suffix(value.count)) == value,
                arg.count == value.count || arg.starts(with: Array("--secret=".utf8)) || arg.starts(with: Array("-w".utf8)) || grouped
            {
                memset(bytes + (length - value.count), 0x2A, value.count)   // '*'
            }
        }
    }

    /// Whether a source was named on the command line.
    var isGiven: Bool { secret != nil || dataFile != nil }

    /// Refuses `--password-stdin` when the secret would come from stdin too (piped, with
    /// neither -w nor --data-file): the two cannot share it.
    func checkStdinIsNotShared(passwordStdin: Bool) throws {
        guard passwordStdin, secret == nil, dataFile == nil, !Terminal.stdinIsTerminal else { return }
        throw ValidationError(
            "--password-stdin and a secret on stdin cannot share stdin: give the secret with -w or --data-file, or the password with --password-file or KC_PASSWORD"
        )
    }

    /// Where the secret comes from. - Parameter stdinTaken: stdin carries the keychain password.
    func source(stdinTaken: Bool) -> SecretSource {
        if secret != nil { return .argument }
        if let dataFile { return .file(dataFile) }
        if !stdinTaken && !Terminal.stdinIsTerminal { return .stdin }
        return .prompt
    }

    /// Refuses an empty `-w ""` before any keychain password is asked for (the other
    /// sources are checked as they are read). - Throws: errSecParam (exit 206).
    func checkArgument() throws {
        guard let secret else { return }
        try SecretSource.argument.checkNotEmpty(count: secret.utf8.count, allowEmpty: allowEmpty)
    }

    /// Reads the secret. - Parameters: `confirm` asks twice at a prompt; `stdinTaken` when
    /// stdin carries the keychain password.
    /// - Throws: errSecParam for an empty secret without --allow-empty; errSecInteractionNotAllowed
    ///   when the secret would be typed and there is no terminal.
    func read(confirm: Bool, stdinTaken: Bool) throws -> SecureBytes {
        let source = source(stdinTaken: stdinTaken)
        let bytes: SecureBytes
        switch source {
        case .argument:
            bytes = try SecureBytes(copying: Array((secret ?? "").utf8))
        case .file(let path):
            bytes = try Readers.readFile(path, limit: Limits.maxSecret, what: "data file")
        case .stdin:
            bytes = try Readers.readAll(0, limit: Limits.maxSecret, what: "the secret on stdin")
        case .prompt:
            guard Terminal.isAvailable else {
                throw KeychainError(
                    errSecInteractionNotAllowed, "no secret given and there is no terminal to ask on",
                    hint: "pipe the secret into stdin, or use --data-file PATH or -w VALUE")
            }
            let allowEmpty = allowEmpty
            // Enter at the first prompt is refused at once, not after typing it twice.
            return confirm
                ? try Terminal.readNewSecret(prompt: "Secret: ", again: "Retype secret: ") { first in
                    try SecretSource.prompt.checkNotEmpty(count: first.count, allowEmpty: allowEmpty)
                }
                : try Self.nonEmpty(Terminal.readSecret(prompt: "Secret: "), from: .prompt, allowEmpty: allowEmpty)
        }
        return try Self.nonEmpty(bytes, from: source, allowEmpty: allowEmpty)
    }

    /// Prints the warning for a secret from stdin or a file that ends in a newline, when
    /// stderr is a terminal (`SecretSource.newlineWarning`). Called once the secret is stored.
    func noteTrailingNewline(_ endsInNewline: Bool, stdinTaken: Bool) {
        guard let (warning, hint) = source(stdinTaken: stdinTaken).newlineWarning(endsInNewline: endsInNewline) else { return }
        Report.note(warning)
        Report.note("hint: " + hint)
    }

    /// The bytes, unless they are empty and `--allow-empty` was not given.
    private static func nonEmpty(_ bytes: consuming SecureBytes, from source: SecretSource, allowEmpty: Bool) throws -> SecureBytes {
        try source.checkNotEmpty(count: bytes.count, allowEmpty: allowEmpty)
        return bytes
    }
}
