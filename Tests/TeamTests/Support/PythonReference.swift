import Foundation
import KCTestSupport

/// Computes reference values with Debian's Python (`hashlib.blake2b`, and the
/// `cryptography` package for X25519 and Ed25519 public keys), independently of libsodium
/// and of the Swift code under test.
enum PythonReference {
    /// Runs `script` with `arguments` under /usr/bin/python3 and returns its stdout, trimmed.
    /// - Throws: when Python fails or outlives its deadline (the test fails with its stderr).
    static func run(_ script: String, _ arguments: [String] = []) throws -> String {
        let out = try Spawn.run(
            ["/usr/bin/python3", "-c", script] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], timeout: 60)
        guard out.status == 0 else {
            throw PythonFailed(stderr: out.stderr)
        }
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Python exited with a failure.
    struct PythonFailed: Error, CustomStringConvertible {
        /// What it printed on stderr.
        var stderr: String
        /// The failure with its stderr.
        var description: String { "python3 failed: \(stderr)" }
    }
}

/// Lower-case hex of bytes, and bytes of hex, for the tests' vectors.
enum Hex {
    /// Lower-case hex.
    static func encode(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The bytes of an even-length hex string (the tests' own constants).
    static func decode(_ hex: String) -> [UInt8] {
        let utf8 = Array(hex.utf8)
        return stride(from: 0, to: utf8.count - 1, by: 2).map { UInt8(String(decoding: utf8[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0 }
    }
}
