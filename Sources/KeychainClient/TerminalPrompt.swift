import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Asks for a secret on the controlling terminal (`/dev/tty`) with echo off, never on
/// stdin, so a secret piped into stdin and a password typed at a prompt never mix. Shared
/// by kc's prompts and by the `Security` module's user-presence prompt.
public enum TerminalPrompt {
    /// The largest secret or password typed at a prompt.
    public static let maxLine = 64 << 10

    /// The terminal settings to restore if the user presses Ctrl-C mid-prompt.
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var savedFD: Int32 = -1

    /// Signals that would leave echo off if they ended the process mid-prompt.
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// Whether a prompt could be shown: a controlling terminal exists and this process is
    /// in its foreground process group (a background job would stop on SIGTTIN).
    public static var isAvailable: Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return tcgetpgrp(fd) == getpgrp()
    }

    /// Asks for a secret with echo off. - Throws: errSecInteractionNotAllowed when there is
    /// no terminal to ask on, errSecUserCanceled on end of input, errSecDataTooLarge past
    /// `maxLine` bytes.
    public static func readSecret(prompt: String) throws -> SecureBytes {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0, tcgetpgrp(fd) == getpgrp() else {
            if fd >= 0 { close(fd) }
            throw KeychainError(errSecInteractionNotAllowed, "there is no terminal to ask on")
        }
        defer { close(fd) }
        var old = termios()
        let haveTermios = tcgetattr(fd, &old) == 0
        if haveTermios {
            var quiet = old
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ICANON)
            saved = old
            savedFD = fd
            for s in signals { signal(s, restoreAndExit) }
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        // The prompt appears only once echo is off, its control characters escaped (it may
        // name a keychain path, an item's label, a caller's reason); its line ends are the
        // caller's own (what it quotes, PresencePrompt escapes whole).
        writeAll(fd, Array(TerminalSafe.escaped(prompt, .lines).utf8))
        defer {
            if haveTermios {
                tcsetattr(fd, TCSAFLUSH, &old)
                savedFD = -1
                for s in signals { signal(s, SIG_DFL) }
            }
            writeAll(fd, [0x0A])
        }
        let buffer = try SecureBytes(count: maxLine)
        var length = 0
        var ended = false
        try buffer.withUnsafeMutableBytes { out in
            var byte: UInt8 = 0
            while true {
                let n = read(fd, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { ended = true; break }
                if byte == 0x0A { break }
                guard length < out.count else {
                    throw KeychainError(errSecDataTooLarge, "the typed value is longer than \(maxLine) bytes")
                }
                out[length] = byte
                length += 1
            }
            byte = 0
        }
        if ended && length == 0 { throw KeychainError(errSecUserCanceled, "no input at the prompt") }
        return try buffer.copy(prefix: length)
    }

    /// Writes all of `bytes` to `fd`, retrying after EINTR; gives up on another error.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Restores the terminal after Ctrl-C at a prompt, then dies of the signal.
private func restoreAndExit(_ signal: Int32) {
    if TerminalPrompt.savedFD >= 0 {
        tcsetattr(TerminalPrompt.savedFD, TCSAFLUSH, &TerminalPrompt.saved)
        _ = write(TerminalPrompt.savedFD, "\n", 1)
    }
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}
