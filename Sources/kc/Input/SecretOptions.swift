import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Where an item's secret comes from: `-w VALUE`, `--data-file PATH`, stdin when it is
/// not a terminal (exact bytes, nothing stripped), or a prompt on the terminal.
struct SecretOptions: ParsableArguments {
    @Option(name: [.customShort("w"), .customLong("secret")], parsing: .unconditional, help: ArgumentHelp(
        "The secret itself. Others can see it in `ps` until kc overwrites it, and in shell history: prefer stdin or --data-file.", valueName: "value"))
    var secret: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Read the secret from a file (exact bytes; binary is fine).", valueName: "path"))
    var dataFile: String?

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
            // "-w VALUE", "--secret VALUE", "--secret=VALUE", "-wVALUE"
            if arg.count >= value.count, Array(arg.suffix(value.count)) == value,
               arg.count == value.count || arg.starts(with: Array("--secret=".utf8)) || arg.starts(with: Array("-w".utf8)) {
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
        throw ValidationError("--password-stdin and a secret on stdin cannot share stdin: give the secret with -w or --data-file, or the password with --password-file or KC_PASSWORD")
    }

    /// Reads the secret. - Parameters: `confirm` asks twice at a prompt; `stdinTaken` when
    /// stdin carries the keychain password.
    func read(confirm: Bool, stdinTaken: Bool) throws -> SecureBytes {
        if let secret {
            return try SecureBytes(copying: Array(secret.utf8))
        }
        if let dataFile {
            return try Readers.readFile(dataFile, limit: Limits.maxSecret, what: "data file")
        }
        if !stdinTaken && !Terminal.stdinIsTerminal {
            let bytes = try Readers.readAll(0, limit: Limits.maxSecret, what: "the secret on stdin")
            guard bytes.count > 0 else {
                throw KeychainError(errSecParam, "the secret on stdin is empty",
                                    hint: "pipe the secret in (printf %s \"$TOKEN\" | kc add ...), or use --data-file or -w")
            }
            return bytes
        }
        guard Terminal.isAvailable else {
            throw KeychainError(errSecInteractionNotAllowed, "no secret given and there is no terminal to ask on",
                                hint: "pipe the secret into stdin, or use --data-file PATH or -w VALUE")
        }
        let secret = confirm
            ? try Terminal.readNewSecret(prompt: "Secret: ", again: "Retype secret: ")
            : try Terminal.readSecret(prompt: "Secret: ")
        return secret
    }
}
