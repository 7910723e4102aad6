import KeychainCore
import TPMSeal
#if canImport(Glibc)
import Glibc
#endif

/// Where kc-tpm gets a PIN: a descriptor the caller passes (`--pin-fd N`, read to its end,
/// one final newline dropped), else the terminal with echo off. Never argv or the
/// environment, which other processes of the user can read.
enum PINReader {
    /// The PIN; `confirm` asks twice on a terminal (when sealing); `terminal: false`
    /// never asks there (`--no-prompt`).
    /// - Throws: errSecInteractionNotAllowed with no descriptor and no terminal (or
    ///   `--no-prompt`);
    ///   errSecParam for an empty or overlong PIN, or two that differ.
    static func read(fd: Int32?, confirm: Bool, terminal: Bool = true) throws(KeychainError) -> [UInt8] {
        if let fd {
            guard fcntl(fd, F_GETFD) != -1 else { throw KeychainError(errSecParam, "descriptor \(fd) (--pin-fd) is not open") }
            guard var pin = readAll(fd, limit: 1024) else { throw KeychainError(errSecParam, "the PIN on descriptor \(fd) is too long") }
            close(fd)
            if pin.last == 0x0A { pin.removeLast() }
            if pin.last == 0x0D { pin.removeLast() }
            guard !pin.isEmpty else { throw KeychainError(errSecParam, "the PIN on descriptor \(fd) is empty") }
            return pin
        }
        guard terminal else {
            throw KeychainError(
                errSecInteractionNotAllowed, "this sealed key needs its PIN, and --no-prompt allows no question", hint: "give it with --pin-fd N")
        }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else {
            throw KeychainError(errSecInteractionNotAllowed, "the TPM PIN is needed and there is no terminal to ask on", hint: "give it with --pin-fd N")
        }
        defer { close(tty) }
        var pin = try prompt(tty, "TPM PIN: ")
        if confirm {
            var again = try prompt(tty, "TPM PIN again: ")
            defer { TPMSeal.wipe(&again) }
            guard again == pin else {
                TPMSeal.wipe(&pin)
                throw KeychainError(errSecParam, "the two PINs differ")
            }
        }
        guard !pin.isEmpty else { throw KeychainError(errSecParam, "the PIN is empty") }
        return pin
    }

    /// The terminal settings to restore if a signal ends the process mid-prompt.
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var savedFD: Int32 = -1

    /// Signals that would leave echo off if they ended the process mid-prompt (those kc's
    /// TerminalPrompt handles).
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// One line from the terminal with echo off; end of input is a cancel.
    static func prompt(_ tty: Int32, _ text: String) throws(KeychainError) -> [UInt8] {
        _ = text.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        let isTerminal = tcgetattr(tty, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            // Ctrl-C (or a kill) mid-prompt must not leave echo off: as kc's TerminalPrompt,
            // the handler restores the settings, then the process dies of the signal.
            PINReader.saved = saved
            PINReader.savedFD = tty
            for s in signals { signal(s, restorePINTerminalAndExit) }
            _ = tcsetattr(tty, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal {
                _ = tcsetattr(tty, TCSAFLUSH, &saved)
                PINReader.savedFD = -1
                for s in signals { signal(s, SIG_DFL) }
            }
            _ = "\n".withCString { write(tty, $0, 1) }
        }
        var line: [UInt8] = []
        line.reserveCapacity(1100)   // no reallocation leaves a copy behind
        var byte: UInt8 = 0
        while true {
            let got = Glibc.read(tty, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            if got <= 0 {
                TPMSeal.wipe(&line)
                throw KeychainError(errSecUserCanceled, "no PIN was given")
            }
            if byte == 0x0A || byte == 0x0D { break }
            line.append(byte)
            if line.count > 1024 {
                TPMSeal.wipe(&line)
                throw KeychainError(errSecParam, "the PIN is too long")
            }
        }
        byte = 0
        return line
    }
}

/// Restores the terminal after a signal at the PIN prompt, then dies of the signal.
private func restorePINTerminalAndExit(_ signal: Int32) {
    if PINReader.savedFD >= 0 {
        tcsetattr(PINReader.savedFD, TCSAFLUSH, &PINReader.saved)
        _ = write(PINReader.savedFD, "\n", 1)
    }
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}
