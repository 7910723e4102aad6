import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Printing to stdout and stderr with write(2): exact bytes, no buffering surprises.
enum Report {
    static func out(_ text: String) { writeAll(1, Array(text.utf8)) }
    static func err(_ text: String) { writeAll(2, Array(text.utf8)) }

    /// Writes every byte, retrying short writes; a closed pipe ends quietly.
    /// - Returns: false when a write failed (a full disk, a closed pipe).
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    @discardableResult
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// `kc: <message>`, `kc: hint: <hint>`, then exit with the status's low byte. With
    /// `KC_DEBUG=1`, also `kc: debug: <cause>` (the SQLite code or errno underneath).
    static func fail(_ error: KeychainError) -> Never {
        err(lines(error))
        if let cause = error.cause, Environment.get("KC_DEBUG") == "1" { line("kc: debug: \(cause)") }
        Startup.exit(exitCode(for: error.status))
    }

    /// `kc: <message>\n` and, when there is one, `kc: hint: <hint>\n`: each one line, its
    /// control characters escaped (`TerminalSafe`, POSIXSupport), for an error carries input.
    static func lines(_ error: KeychainError) -> String {
        "kc: \(TerminalSafe.escaped(error.message))\n" + (error.hint.map { "kc: hint: \(TerminalSafe.escaped($0))\n" } ?? "")
    }

    /// A notice on stderr (never a secret): `kc: <text>`, one line, control characters escaped.
    static func note(_ text: String) { line("kc: " + text) }

    /// One line of a message (stderr, or stdout for Docker's helper protocol), its control
    /// characters escaped: nothing it quotes can act on the terminal or start another line.
    static func line(_ text: String, to fd: Int32 = 2) { writeAll(fd, Array((TerminalSafe.escaped(text) + "\n").utf8)) }

    /// ArgumentParser's message for a usage error, on stderr, with what it quotes from argv
    /// escaped (`TerminalSafe.usageMessage`).
    static func usage(_ message: String) {
        err(TerminalSafe.usageMessage(message, arguments: Array(CommandLine.arguments.dropFirst())) + "\n")
    }
}
