import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// kc-team's messages on its standard streams, in kc's form: `kc-team: <message>` and
/// `kc-team: hint: <hint>`, each one line with control characters escaped.
enum TeamReport {
    /// Reports `error` and exits with its status's low byte, as kc does.
    static func fail(_ error: KeychainError) -> Never {
        write(2, "kc-team: \(escaped(error.message))\n" + (error.hint.map { "kc-team: hint: \(escaped($0))\n" } ?? ""))
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

    /// `text` with control characters as `\u{…}` escapes: a message quoting input cannot act
    /// on the terminal or start another line.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) {
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
