import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// kc-team's messages on its standard streams, in kc's form: `kc-team: <message>` and
/// `kc-team: hint: <hint>`, each one line with control characters escaped.
enum TeamReport {
    /// Reports `error` and exits with its status's low byte, as kc does.
    static func fail(_ error: KeychainError) -> Never {
        line("kc-team: " + error.message)
        if let hint = error.hint { line("kc-team: hint: " + hint) }
        exit(exitCode(for: error.status))
    }

    /// Writes all of `text` to `fd`.
    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// One line on `fd`, its control characters escaped (`TerminalSafe`): a member's name,
    /// a path or a server's text in it cannot act on the terminal or start another line.
    static func line(_ text: String, to fd: Int32 = 2) {
        write(fd, TerminalSafe.escaped(text) + "\n")
    }
}
