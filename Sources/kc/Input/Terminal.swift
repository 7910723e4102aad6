import KeychainCore
import KeychainClient
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Prompts on the controlling terminal (`/dev/tty`) with echo off, never on stdin, so a
/// secret piped into stdin and a password typed at a prompt never mix.
enum Terminal {
    /// The largest secret or password typed at a prompt.
    static let maxLine = TerminalPrompt.maxLine

    /// Whether a prompt could be shown: a controlling terminal exists and this process is
    /// in its foreground process group (a background job would stop on SIGTTIN).
    static var isAvailable: Bool { TerminalPrompt.isAvailable }

    /// Signals that would leave echo off if they ended kc mid-prompt.
    static let signals = TerminalPrompt.signals

    /// Whether stdin / stdout is a terminal.
    static var stdinIsTerminal: Bool { isatty(0) == 1 }
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
    /// Whether stderr is a terminal (a person reads the notes there).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Asks a yes/no question on the terminal (echo on); true only for "y" or "yes".
    /// - Throws: errSecInteractionNotAllowed when there is no terminal to ask on.
    static func confirm(_ prompt: String) throws -> Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0, tcgetpgrp(fd) == getpgrp() else {
            if fd >= 0 { close(fd) }
            throw KeychainError(errSecInteractionNotAllowed, "there is no terminal to ask on")
        }
        defer { close(fd) }
        Report.writeAll(fd, Array(TerminalSafe.escaped(prompt, .lines).utf8))
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 64 {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            line.append(byte)
        }
        let answer = String(decoding: line, as: UTF8.self).trimmingSpaces.lowercased()
        return answer == "y" || answer == "yes"
    }

    /// Asks for a secret with echo off (`TerminalPrompt`). - Throws:
    /// errSecInteractionNotAllowed when there is no terminal to ask on, errSecUserCanceled
    /// on end of input.
    static func readSecret(prompt: String) throws -> SecureBytes {
        try TerminalPrompt.readSecret(prompt: prompt)
    }

    /// Asks twice and insists the two match (for new passwords and new secrets).
    /// - Parameter checkFirst: runs on the first entry before the second is asked for (so
    ///   an entry refused anyway, such as an empty secret, is not typed twice).
    static func readNewSecret(prompt: String, again: String, checkFirst: (borrowing SecureBytes) throws -> Void = { _ in }) throws -> SecureBytes {
        let first = try readSecret(prompt: prompt)
        try checkFirst(first)
        let second = try readSecret(prompt: again)
        guard first.constantTimeEquals(second) else {
            throw KeychainError(errSecParam, "the two entries do not match; nothing was changed")
        }
        return first
    }
}
