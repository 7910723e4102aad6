import ArgumentParser
import KeychainCore

/// `kc error`: Apple's message for status codes, as `security error` prints them.
struct ErrorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "error",
        abstract: "Print the message of each status code.",
        discussion: """
            Codes are decimal, hexadecimal (0x...) or negative, as `security error`
            takes them.

            Examples:
              kc error -26275
              Error: 0xFFFF995D -26275 Unable to decode the provided data.
              kc error 44    # an exit code of kc: names the status it stands for too
            """
    )

    @Argument(parsing: .allUnrecognized, help: "Status codes.")
    var codes: [String]

    func validate() throws {
        if codes.isEmpty { throw ValidationError("give at least one status code") }
        for code in codes where Self.parse(code) == nil {
            throw ValidationError("\"\(code)\" is not a number")
        }
    }

    func run() throws {
        for code in codes {
            guard let status = Self.parse(code) else { continue }
            var line = "Error: 0x\(Self.hex8(UInt32(bitPattern: status))) \(status) \(SecCopyErrorMessageString(status, nil) ?? "")"
            if (1...255).contains(status), let meant = Self.statusForExitCode(status) {
                line += "\n  as a kc exit code: \(meant) \(SecCopyErrorMessageString(meant, nil) ?? "")"
            }
            Report.out(line + "\n")
        }
    }

    /// strtol-like parsing: decimal, 0x hexadecimal, a leading minus.
    static func parse(_ s: String) -> OSStatus? {
        var text = Substring(s)
        var negative = false
        if text.hasPrefix("-") { negative = true; text = text.dropFirst() }
        let value: UInt64?
        if text.lowercased().hasPrefix("0x") {
            value = UInt64(text.dropFirst(2), radix: 16)
        } else {
            value = UInt64(text)
        }
        guard let v = value, v <= UInt64(UInt32.max) else { return nil }
        if negative {
            guard v <= UInt64(Int32.max) + 1 else { return nil }
            return OSStatus(truncatingIfNeeded: -Int64(v))
        }
        return OSStatus(bitPattern: UInt32(v))
    }

    static func hex8(_ v: UInt32) -> String {
        let h = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - h.count) + h
    }

    /// The documented status whose low byte is this exit code, if exactly one is.
    static func statusForExitCode(_ code: OSStatus) -> OSStatus? {
        let documented: [OSStatus] = [
            errSecParam, errSecIO, errSecAllocate, errSecNotAvailable, errSecReadOnly, errSecAuthFailed,
            errSecNoSuchKeychain, errSecDuplicateKeychain, errSecDuplicateItem, errSecItemNotFound,
            errSecDataTooLarge, errSecNoSuchAttr, errSecNoSuchClass, errSecInteractionNotAllowed,
            errSecWrongSecVersion, errSecDecode, errSecDiskFull, errSecUnimplemented, errSecUserCanceled,
            errSecRestrictedAPI
        ]
        let hits = documented.filter { KeychainCore.exitCode(for: $0) == code }
        return hits.count == 1 ? hits[0] : nil
    }
}
