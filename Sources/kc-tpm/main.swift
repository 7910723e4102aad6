import Dispatch
import KeychainCore
import POSIXSupport
import TPMSeal
#if canImport(Glibc)
import Glibc
#endif

// kc-tpm: seals a 32-byte key to this machine's TPM and unseals it (docs/tpm.md). It is a
// program of its own, installed beside kc, so that kc links no tpm2-tss.

let usage = """
    usage: kc-tpm seal [--pin] [--pin-fd N] [--pcrs LIST] [--timeout SECONDS] [--handshake]
           kc-tpm unseal [--pin-fd N | --no-prompt] [--timeout SECONDS] [--handshake]
           kc-tpm describe
      seal     reads exactly 32 bytes on stdin, seals them to the TPM and writes the
               sealed key (a kc-tpm blob, docs/tpm.md) on stdout
      unseal   reads a sealed key on stdin and writes its 32 bytes on stdout
      describe reads a sealed key on stdin and says, without the TPM, whether it needs
               a PIN and which PCRs bind it ("pin: yes", "pcrs: 0,7" or "pcrs: none")
      --pin          seal with a PIN: the TPM then counts wrong PINs towards its lockout
      --pin-fd N     read the PIN from descriptor N (to its end; one final newline is
                     dropped) instead of the terminal
      --no-prompt    never ask on the terminal: a key that needs a PIN and has no
                     --pin-fd fails at once (exit 36)
      --pcrs LIST    bind to these PCRs of the SHA-256 bank, e.g. 0,7: unseal then works
                     only while they hold the values they hold now
      --timeout S    give up when the TPM has not answered in S seconds (default 30)
      --handshake    (for kc) write one byte, 0x06, on stdout once kc-tpm is not dumpable
                     and not traced, before reading anything; refuse (exit 22) if traced
    The TPM: KC_TPM_TCTI (a tpm2-tss TCTI, e.g. swtpm:host=127.0.0.1,port=2321), else the
    kernel's TPM device (/dev/tpmrm0, /dev/tpm0), never a simulator it was not named. A
    socket TCTI trusts whoever owns the port: nothing authenticates the TPM.
    Exit codes: 0 done; 2 usage, or stdout on a terminal; 51 wrong PIN or the TPM in
    lockout; 53 no TPM reachable, or it stopped answering; 93 a sealed key that is damaged
    or from another TPM; 22 PCRs no longer as sealed; 36 a PIN needed and no way to ask;
    34 a newer blob layout; 206 a bad secret, PIN, --pcrs or KC_TPM_TCTI; 169 anything
    else (docs/errors.md, docs/tpm.md).

    """

/// Says `kc: message` (and its hint) on stderr, escaped for the terminal, and exits.
func fail(_ error: KeychainError) -> Never {
    var text = TerminalSafe.escaped("kc: " + error.message, .lines) + "\n"
    if let hint = error.hint { text += TerminalSafe.escaped("kc: hint: " + hint, .lines) + "\n" }
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(exitCode(for: error.status))
}

func usageError(_ message: String) -> Never {
    let text = TerminalSafe.escaped("kc: " + message, .lines) + "\nkc: hint: see 'kc-tpm --help'\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

/// Up to `limit` bytes from `fd`, to its end; nil when there are more.
func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(limit + 4096)   // no reallocation leaves a copy behind
    var buffer = [UInt8](repeating: 0, count: 4096)
    defer { TPMSeal.wipe(&buffer) }
    while true {
        let got = read(fd, &buffer, buffer.count)
        if got < 0 && errno == EINTR { continue }
        if got <= 0 { break }
        out += buffer[0..<got]
        if out.count > limit {
            TPMSeal.wipe(&out)
            return nil
        }
    }
    return out
}

/// Writes all of `bytes` to stdout.
func writeOut(_ bytes: [UInt8]) -> Bool {
    var at = 0
    while at < bytes.count {
        let wrote = bytes[at...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if wrote < 0 && errno == EINTR { continue }
        if wrote <= 0 { return false }
        at += wrote
    }
    return true
}

setenv("TSS2_LOG", "all+NONE", 1)   // tpm2-tss's own log lines are not kc's voice
umask(0o077)
_ = ProcessHardening.disableCoreDumps()
var arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.popFirst() else { usageError("kc-tpm needs a command: seal, unseal or describe") }
if command == "-h" || command == "--help" {
    _ = usage.withCString { write(1, $0, strlen($0)) }
    exit(0)
}
guard ["seal", "unseal", "describe"].contains(command) else { usageError("unknown command '\(command)'") }
var askPIN = false
var prompt = true
var pinFD: Int32?
var pcrMask: UInt32 = 0
var timeout = 30.0
var handshake = false
while let word = arguments.popFirst() {
    switch word {
    case "--pin" where command == "seal": askPIN = true
    case "--no-prompt" where command == "unseal": prompt = false
    case "--handshake" where command != "describe": handshake = true
    case "--pin-fd" where command != "describe":
        guard let value = arguments.popFirst(), let fd = Int32(value), fd > 2 else { usageError("--pin-fd takes a descriptor number above 2") }
        pinFD = fd
    case "--pcrs" where command == "seal":
        guard let value = arguments.popFirst() else { usageError("--pcrs needs a list such as 0,7") }
        do { pcrMask = try PCRList.mask(value) } catch { fail(error) }
    case "--timeout" where command != "describe":
        guard let value = arguments.popFirst(), let seconds = Double(value), seconds >= 1, seconds <= 600 else {
            usageError("--timeout takes 1 to 600 seconds")
        }
        timeout = seconds
    default: usageError("unknown option '\(word)'")
    }
}
if pinFD != nil && command == "seal" { askPIN = true }
// The key and the blob are raw bytes: written to a terminal they would be shown, and a
// terminal takes some bytes as commands.
if command != "describe" && isatty(1) == 1 {
    usageError("kc-tpm \(command) writes raw bytes: send its output to a pipe or a file, not the terminal")
}
// kc sends the key and the PIN only after this byte: until kc-tpm is non-dumpable (its
// first lines), a process of the same user could open its descriptors through /proc or
// attach to it, and a tracer attached then would still be attached now.
if handshake {
    if ProcessHardening.isDumpable || ProcessHardening.isTraced {
        fail(KeychainError(errSecCSReqFailed, "kc-tpm is being traced (or could not make itself non-dumpable): it reads no key and no PIN"))
    }
    guard writeOut([0x06]) else { fail(KeychainError(errSecIO, "stdout could not be written")) }
}
let tcti = getenv("KC_TPM_TCTI").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

/// The TPM must answer within the timeout: a hung TCTI (a socket that accepts and never
/// answers) ends the program with kc's message rather than hanging its caller.
func startWatchdog(_ seconds: Double) {
    let message = "kc: the TPM did not answer within \(Int(seconds)) s\n"
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        _ = message.withCString { write(2, $0, strlen($0)) }
        _exit(exitCode(for: errSecNotAvailable))
    }
}

do throws(KeychainError) {
    if command == "describe" {
        guard let bytes = readAll(0, limit: 4096) else { throw KeychainError(errSecDecode, "the sealed key on stdin is too long") }
        let blob = try SealedBlob(bytes)
        let pcrs = PCRList.numbers(blob.pcrMask).map(String.init).joined(separator: ",")
        guard writeOut(Array("pin: \(blob.hasPIN ? "yes" : "no")\npcrs: \(pcrs.isEmpty ? "none" : pcrs)\n".utf8)) else {
            throw KeychainError(errSecIO, "stdout could not be written")
        }
    } else if command == "seal" {
        guard var secret = readAll(0, limit: TPMSeal.secretSize), secret.count == TPMSeal.secretSize else {
            throw KeychainError(errSecParam, "kc-tpm seal reads exactly \(TPMSeal.secretSize) bytes on stdin")
        }
        defer { TPMSeal.wipe(&secret) }
        var pin = askPIN ? try PINReader.read(fd: pinFD, confirm: true) : nil
        defer { if pin != nil { TPMSeal.wipe(&pin!) } }
        startWatchdog(timeout)
        let blob = try TPMSeal.seal(secret, pin: pin, pcrMask: pcrMask, tcti: tcti)
        guard writeOut(blob.bytes) else { throw KeychainError(errSecIO, "the sealed key could not be written to stdout") }
    } else {
        guard let bytes = readAll(0, limit: 4096) else { throw KeychainError(errSecDecode, "the sealed key on stdin is too long") }
        let blob = try SealedBlob(bytes)
        var pin = blob.hasPIN ? try PINReader.read(fd: pinFD, confirm: false, terminal: prompt) : nil
        defer { if pin != nil { TPMSeal.wipe(&pin!) } }
        startWatchdog(timeout)
        var secret = try TPMSeal.unseal(blob, pin: pin, tcti: tcti)
        defer { TPMSeal.wipe(&secret) }
        guard writeOut(secret) else { throw KeychainError(errSecIO, "the key could not be written to stdout") }
    }
} catch {
    fail(error)
}
