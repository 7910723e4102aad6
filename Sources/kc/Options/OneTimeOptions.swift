import ArgumentParser
import KeychainCore
import KeychainFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

extension HMAC.Algorithm: ExpressibleByArgument {
    /// SHA1, SHA256 or SHA512, in any case, with or without a dash.
    public init?(argument: String) { self.init(rawValue: argument.uppercased().filter { $0 != "-" }) }
}

/// `kc add --totp`: the secret is a one-time-code seed (an `otpauth://` URI, or a base32
/// secret with `--algorithm`, `--digits`, `--period` or `--counter`), kept as `kc import`
/// keeps one: a generic password with service `otpauth/SERVICE`, label "SERVICE (one-time
/// codes)", kind `otpauth`, and the URI as its secret. The seed comes from where every
/// secret comes from (a prompt, stdin, --data-file, -w), never from an argument of its own:
/// an argument is visible to every user in `ps`.
struct OneTimeOptions: ParsableArguments {
    /// --totp: the secret is a seed.
    @Flag(name: Options.totp.names, help: Options.totp.help)
    var totp = false

    /// --algorithm, for a base32 seed.
    @Option(name: Options.algorithm.names, parsing: .unconditional, help: Options.algorithm.help, completion: Options.algorithm.completion)
    var algorithm: HMAC.Algorithm?

    /// --digits, for a base32 seed.
    @Option(name: Options.digits.names, parsing: .unconditional, help: Options.digits.help, completion: Options.digits.completion)
    var digits: Int?

    /// --period, for a base32 TOTP seed.
    @Option(name: Options.period.names, parsing: .unconditional, help: Options.period.help, completion: Options.period.completion)
    var period: Int64?

    /// --counter, for a base32 HOTP seed.
    @Option(name: Options.counter.names, parsing: .unconditional, help: Options.counter.help, completion: Options.counter.completion)
    var counter: UInt64?

    /// Whether a base32-only option was given.
    private var hasParameters: Bool { algorithm != nil || digits != nil || period != nil || counter != nil }

    /// Usage errors (exit 2): the seed's flags without --totp, or out of range.
    func validate() throws {
        if !totp && hasParameters { throw ValidationError("--algorithm, --digits, --period and --counter go with --totp") }
        if let digits, !OneTimeSeed.digitRange.contains(digits) { throw ValidationError("--digits is 6, 7 or 8") }
        if let period, !(1...OneTimeSeed.maxPeriod).contains(period) {
            throw ValidationError("--period is a number of seconds from 1 to \(OneTimeSeed.maxPeriod)")
        }
        if period != nil && counter != nil { throw ValidationError("choose one of --period (TOTP) and --counter (HOTP)") }
    }

    /// The item a seed is stored as: service `otpauth/SERVICE` (unless already so named),
    /// label and kind as `kc import` gives them unless the command line gives its own.
    /// - Throws: errSecParam without a service, or for a class other than generic.
    func storedFields(_ fields: ItemFields) throws -> ItemFields {
        guard fields.itemClass == .generic else {
            throw KeychainError(
                errSecParam, "one-time-code seeds are stored as generic passwords (service otpauth/SERVICE), not as \(fields.itemClass.rawValue)s",
                hint: "drop --class; kc totp -s SERVER finds otpauth/SERVER beside an internet password")
        }
        guard let service = fields.service, !service.isEmpty else {
            throw KeychainError(errSecParam, "a one-time-code seed needs a service (-s)", hint: "for example: kc add -s github.com -a alice --totp")
        }
        var stored = fields
        let name = service.hasPrefix(OneTimeCode.servicePrefix) ? String(service.dropFirst(OneTimeCode.servicePrefix.count)) : service
        stored.service = OneTimeCode.servicePrefix + name
        if stored.label == nil { stored.label = "\(name) (one-time codes)" }
        if stored.kind == nil { stored.kind = "otpauth" }
        return stored
    }

    /// The secret to store for `seed` (as typed or read): an otpauth URI, checked and kept
    /// as given (surrounding white space aside); a base32 secret, written as a URI.
    /// - Throws: errSecParam naming the fault (never the seed); for a URI with
    ///   --algorithm, --digits, --period or --counter (the URI carries them).
    func storedSecret(_ seed: borrowing SecureBytes, fields: ItemFields) throws -> Data {
        var bytes = seed.withUnsafeBytes { Array($0) }
        defer { Sodium.wipe(&bytes) }
        while let l = bytes.last, l == 0x20 || l == 0x09 || l == 0x0A || l == 0x0D { bytes.removeLast() }
        while let f = bytes.first, f == 0x20 || f == 0x09 || f == 0x0A || f == 0x0D { bytes.removeFirst() }
        if OneTimeSeed.isURI(bytes) {
            if hasParameters {
                throw KeychainError(
                    errSecParam, "an otpauth:// URI carries its own algorithm, digits, period and counter",
                    hint: "drop --algorithm, --digits, --period and --counter, or give the bare base32 secret")
            }
            _ = try OneTimeSeed(uri: bytes)
            return Data(bytes)
        }
        let service = fields.service ?? ""
        let issuer = service.hasPrefix(OneTimeCode.servicePrefix) ? String(service.dropFirst(OneTimeCode.servicePrefix.count)) : service
        let kind: OneTimeSeed.Kind = counter.map { .hotp(counter: $0) } ?? .totp(period: period ?? 30)
        do {
            var uri = try OneTimeSeed.uri(
                base32: bytes, issuer: issuer, account: fields.account ?? "", kind: kind,
                algorithm: algorithm ?? .sha1, digits: digits ?? 6)
            defer { Sodium.wipe(&uri) }
            return Data(uri)
        } catch let error as KeychainError {
            throw KeychainError(
                errSecParam, "malformed one-time-code secret: \(error.message)",
                hint: "give the base32 secret the site shows (A-Z, 2-7; spaces and = padding are fine), or the otpauth:// URI")
        }
    }
}
