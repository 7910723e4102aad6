#if canImport(Glibc)
import Glibc
#endif

/// What the benchmark programs (`kc-bench`, `kc-team-bench`, run by `make bench`) print:
/// one JSON object of numbers per line on stdout, and a failure on stderr. Not installed.
package enum BenchOutput {
    /// Prints one JSON object of numbers, each rounded to three decimals.
    package static func emit(_ pairs: [(String, Double)]) {
        let body = pairs.map { "\"\($0.0)\": \(($0.1 * 1000).rounded() / 1000)" }.joined(separator: ", ")
        print("{\(body)}")
    }

    /// Writes `message` on stderr, prefixed with `program`.
    package static func warn(_ program: String, _ message: String) {
        let bytes = Array("\(program): \(message)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Ends the program with `message` on stderr and exit status 1.
    package static func fail(_ program: String, _ message: String) -> Never {
        warn(program, message)
        exit(1)
    }
}
