import KeychainCore
import POSIXSupport
import KeychainFormats
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

    /// Refuses JSON input in which an object names a key twice: Go's and Python's decoders
    /// (Terraform's, AWS's) take the last value, kc's the first, so the two would disagree
    /// on which key or token was meant. Keys are compared with their escapes decoded
    /// (`"\u0041ccessKeyId"` is `"AccessKeyId"`). Malformed JSON is left to the parser.
    /// - Throws: errSecParam naming the key.
    static func refuseDuplicateKeys(_ bytes: [UInt8], _ what: String) throws {
        var objects: [Set<[UInt16]>] = []
        var stack: [UInt8] = []
        var i = 0
        var lastString: [UInt16]?
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "{"):
                stack.append(b)
                objects.append([])
            case UInt8(ascii: "}"):
                if stack.last == UInt8(ascii: "{") { stack.removeLast(); objects.removeLast() }
            case UInt8(ascii: "["):
                stack.append(b)
            case UInt8(ascii: "]"):
                if stack.last == UInt8(ascii: "[") { stack.removeLast() }
            case UInt8(ascii: ":"):
                if let key = lastString, stack.last == UInt8(ascii: "{"), !objects.isEmpty {
                    guard objects[objects.count - 1].insert(key).inserted else {
                        throw KeychainError(
                            errSecParam, "\(what): the JSON on stdin gives the key \(JSON.string(String(decoding: key, as: UTF16.self))) twice; nothing stored",
                            hint: "give each key once")
                    }
                }
            case UInt8(ascii: "\""):
                var units: [UInt16] = []
                var utf8: [UInt8] = []
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count {
                        units += String(decoding: utf8, as: UTF8.self).utf16
                        utf8 = []
                        let e = bytes[i + 1]
                        i += 2
                        if e == UInt8(ascii: "u"), i + 4 <= bytes.count, let v = UInt16(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) {
                            units.append(v)
                            i += 4
                        } else {
                            let map: [UInt8: UInt16] = [0x62: 8, 0x66: 12, 0x6E: 10, 0x72: 13, 0x74: 9]
                            units.append(map[e] ?? UInt16(e))
                        }
                        continue
                    }
                    utf8.append(bytes[i])
                    i += 1
                }
                units += String(decoding: utf8, as: UTF8.self).utf16
                lastString = units
                i += 1
                continue
            default:
                break
            }
            if b != UInt8(ascii: " ") && b != UInt8(ascii: "\n") && b != UInt8(ascii: "\t") && b != UInt8(ascii: "\r") && b != UInt8(ascii: ":") {
                lastString = nil
            }
            i += 1
        }
    }
}
