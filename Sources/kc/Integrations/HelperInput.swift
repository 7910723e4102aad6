import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a credential helper reads: stdin, to the end or (git) to the first empty line,
/// at most `limit` bytes, and the keychain options that precede its operation.
enum HelperInput {
    /// stdin's bytes: all of them, or up to and without a line that is empty.
    static func readStdin(limit: Int = 1 << 20, stopAtEmptyLine: Bool) throws -> [UInt8] {
        var out: [UInt8] = []
        var byte: UInt8 = 0
        var chunk = [UInt8](repeating: 0, count: 4096)
        if stopAtEmptyLine {
            // Byte by byte: nothing after the empty line is consumed (git may keep writing).
            while out.count <= limit {
                let n = read(0, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                if byte == 0x0A && (out.isEmpty || out.last == 0x0A) { break }
                out.append(byte)
            }
        } else {
            while out.count <= limit {
                let n = read(0, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                out.append(contentsOf: chunk[0..<n])
            }
            for i in chunk.indices { chunk[i] = 0 }
        }
        guard out.count <= limit else {
            for i in out.indices { out[i] = 0 }
            throw KeychainError(errSecDataTooLarge, "the helper's input is larger than \(limit) bytes")
        }
        return out
    }

    /// The hint for a keychain that is locked with no password to be had: `kc unlock`
    /// (with the helper's `-k`), since a helper's stdin is its protocol and
    /// `--password-stdin` cannot reach it.
    static func unlockHint(_ choice: KeychainChoice) -> String {
        let unlock = choice.keychain.map { "kc unlock -k \(ShellWord.quoted($0))" } ?? "kc unlock"
        return "run `\(unlock)`; a credential helper cannot ask for the keychain's password"
    }

    /// Splits `-k/--keychain X`, `--password-file F` from the rest of a helper's arguments
    /// (their names from the table, `Options`).
    static func options(_ arguments: ArraySlice<String>) throws -> (KeychainChoice, [String]) {
        var choice = KeychainChoice()
        var rest: [String] = []
        var i = arguments.startIndex
        while i < arguments.endIndex {
            let a = arguments[i]
            func value() throws -> String {
                let next = arguments.index(after: i)
                guard next < arguments.endIndex, !arguments[next].isEmpty else {
                    throw KeychainError(errSecParam, "\(a) needs a value")
                }
                i = next
                return arguments[next]
            }
            let attached = Options.keychain.long.map { $0 + "=" } ?? ""
            if Options.keychain.isNamed(a[...]) {
                choice.keychain = try value()
            } else if Options.passwordFile.isNamed(a[...]) {
                choice.passwordFile = try value()
            } else if a.hasPrefix(attached) {
                choice.keychain = String(a.dropFirst(attached.count))
            } else if let short = Options.keychain.short, a.hasPrefix(short), !a.hasPrefix("--"), a.utf8.count > 2 {
                // `-kwork`, as getopt reads it (and `-k=work`, as ArgumentParser does).
                let value = a.dropFirst(short.count)
                choice.keychain = String(value.hasPrefix("=") ? value.dropFirst() : value)
            } else {
                rest.append(a)
            }
            i = arguments.index(after: i)
        }
        if choice.keychain?.isEmpty == true { throw KeychainError(errSecParam, "-k/--keychain is empty") }
        return (choice, rest)
    }
}
