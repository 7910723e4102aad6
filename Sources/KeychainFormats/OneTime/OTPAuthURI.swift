import KeychainCore

/// `otpauth://` URIs (Google Authenticator's Key Uri Format, which every password manager
/// exports): parsing into a `OneTimeSeed`, writing one, and advancing a HOTP counter.
///
///     otpauth://TYPE/[ISSUER:]ACCOUNT?secret=BASE32[&issuer=ISSUER][&algorithm=SHA1|SHA256|SHA512]
///                                     [&digits=6|7|8][&period=SECONDS][&counter=N]
///
/// TYPE is `totp` (period 30 by default), `hotp` (counter 0 by default) or `steam`
/// (Aegis); `encoder=steam` (KeePassXC) also selects Steam Guard codes. Names and the
/// scheme are matched without regard to case; values are percent-decoded; unknown
/// parameters (`image`, `lock`…) are ignored. Every error is errSecParam naming the fault,
/// never the secret.
extension OneTimeSeed {
    /// The scheme, lower case.
    package static let scheme = Array("otpauth://".utf8)

    /// Whether `bytes` (leading spaces aside) start as an `otpauth://` URI does.
    package static func isURI(_ bytes: [UInt8]) -> Bool {
        let start = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return start.count >= scheme.count && zip(start.prefix(scheme.count), scheme).allSatisfy { lower($0) == $1 }
    }

    /// Parses a URI (surrounding white space is ignored).
    /// - Throws: errSecParam: not an otpauth URI, an unknown type or algorithm, no secret,
    ///   a bad base32 character (its position), digits outside 6–8, a period of 0 or not a
    ///   number, a counter that is not a number.
    package convenience init(uri: [UInt8]) throws {
        func bad(_ why: String) -> KeychainError {
            KeychainError(
                errSecParam, "malformed otpauth:// URI: \(why)",
                hint:
                    "write otpauth://totp/LABEL?secret=BASE32 with optional &algorithm=SHA1|SHA256|SHA512, &digits=6-8, &period=SECONDS (docs/commands.md, kc totp)"
            )
        }
        var text = ArraySlice(uri)
        while let f = text.first, f == 0x20 || f == 0x09 || f == 0x0A || f == 0x0D { text = text.dropFirst() }
        while let l = text.last, l == 0x20 || l == 0x09 || l == 0x0A || l == 0x0D { text = text.dropLast() }
        guard Self.isURI(Array(text)) else { throw bad("it does not start with otpauth://") }
        text = text.dropFirst(Self.scheme.count)
        let queryStart = text.firstIndex(of: UInt8(ascii: "?"))
        let path = queryStart.map { text[..<$0] } ?? text
        let query = queryStart.map { text[text.index(after: $0)...] } ?? []
        let slash = path.firstIndex(of: UInt8(ascii: "/"))
        let type = String(decoding: (slash.map { path[..<$0] } ?? path).map(Self.lower), as: UTF8.self)
        let label = slash.flatMap { Self.percentDecoded(path[path.index(after: $0)...]) }.map { String(decoding: $0, as: UTF8.self) } ?? ""

        var secret: [UInt8]?
        defer { if secret != nil { Sodium.wipe(&secret!) } }
        var issuer: String?
        var algorithm = HMAC.Algorithm.sha1
        var digits: Int?
        var period: Int64 = 30
        var counter: UInt64 = 0
        var steam = type == "steam"
        var seen: Set<String> = []
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let eq = pair.firstIndex(of: UInt8(ascii: "="))
            let name = String(decoding: (eq.map { pair[..<$0] } ?? pair).map(Self.lower), as: UTF8.self)
            // A parameter kc reads, given twice, is refused: which one counts would be a guess,
            // and a HOTP counter read from one and advanced in the other would never move.
            if ["issuer", "algorithm", "digits", "period", "counter", "encoder"].contains(name) {
                guard seen.insert(name).inserted else { throw bad("it has two \(name) parameters") }
            }
            guard var value = Self.percentDecoded(eq.map { pair[pair.index(after: $0)...] } ?? []) else {
                throw bad(name == "secret" ? "the secret has a malformed %-escape" : "the \(name) parameter has a malformed %-escape")
            }
            defer { Sodium.wipe(&value) }
            let text = { String(decoding: value, as: UTF8.self) }
            switch name {
            case "secret":
                guard secret == nil else { throw bad("it has two secret parameters") }
                secret = value
            case "issuer":
                issuer = text()
            case "algorithm":
                let name = text().uppercased().filter { $0 != "-" }
                guard let a = HMAC.Algorithm(rawValue: name) else {
                    throw bad("unknown algorithm \(JSON.string(text())) (SHA1, SHA256 or SHA512)")
                }
                algorithm = a
            case "digits":
                guard let d = Int(text()) else { throw bad("digits must be 6, 7 or 8, not \(JSON.string(text()))") }
                digits = d
            case "period":
                guard let p = Int64(text()), p > 0, p <= Self.maxPeriod else {
                    throw bad("the period must be a whole number of seconds from 1 to \(Self.maxPeriod), not \(JSON.string(text()))")
                }
                period = p
            case "counter":
                guard let c = UInt64(text()) else { throw bad("the counter must be a whole number from 0, not \(JSON.string(text()))") }
                counter = c
            case "encoder":
                if text().lowercased() == "steam" { steam = true }
            default:
                continue
            }
        }
        let kind: Kind
        switch type {
        case "totp", "steam": kind = .totp(period: period)
        case "hotp": kind = .hotp(counter: counter)
        default: throw bad("the type is \(JSON.string(type)), not totp or hotp")
        }
        guard let seed = secret, !seed.isEmpty else { throw bad("it has no secret= parameter") }
        var key: [UInt8]
        do {
            key = try Base32.decode(seed)
        } catch let error as KeychainError {
            throw bad(error.message)
        }
        defer { Sodium.wipe(&key) }
        do {
            try self.init(key: key, kind: kind, algorithm: algorithm, digits: digits ?? 6, steam: steam)
        } catch let error as KeychainError {
            throw bad(error.message)
        }
        // "Issuer:account" (the colon may be %3A); the issuer parameter wins over the prefix.
        if let colon = label.firstIndex(of: ":") {
            self.issuer = issuer ?? String(label[..<colon]).trimmingSpaces
            self.accountName = String(label[label.index(after: colon)...]).trimmingSpaces
        } else {
            self.issuer = issuer
            self.accountName = label.isEmpty ? nil : label
        }
    }

    /// A URI for a seed given as base32 (`kc add --totp` with a bare secret): the secret
    /// normalised (upper case, no spaces, no padding), the label `ISSUER:ACCOUNT`, and only
    /// the parameters that differ from the defaults.
    /// - Throws: errSecParam as `init(key:kind:…)` and `Base32.decode` do.
    package static func uri(
        base32 secret: [UInt8], issuer: String, account: String, kind: Kind,
        algorithm: HMAC.Algorithm, digits: Int
    ) throws -> [UInt8] {
        var key = try Base32.decode(secret)
        defer { Sodium.wipe(&key) }
        _ = try OneTimeSeed(key: key, kind: kind, algorithm: algorithm, digits: digits)
        var normalised = Base32.encode(key)
        defer { Sodium.wipe(&normalised) }
        let label =
            account.isEmpty
            ? WebAddress.percentEncoded(issuer)
            : WebAddress.percentEncoded(issuer) + ":" + WebAddress.percentEncoded(account)
        let type: String
        switch kind {
        case .totp: type = "totp"
        case .hotp: type = "hotp"
        }
        var out = Array("otpauth://\(type)/\(label)?secret=".utf8)
        out += normalised
        var tail = "&issuer=\(WebAddress.percentEncoded(issuer))"
        if algorithm != .sha1 { tail += "&algorithm=\(algorithm.rawValue)" }
        if digits != 6 { tail += "&digits=\(digits)" }
        switch kind {
        case .totp(let period): if period != 30 { tail += "&period=\(period)" }
        case .hotp(let counter): tail += "&counter=\(counter)"
        }
        out += Array(tail.utf8)
        return out
    }

    /// The URI with its counter set to `counter`: the `counter=` parameter replaced where it
    /// is, or added at the end; every other byte kept as it was.
    package static func settingCounter(_ uri: [UInt8], to counter: UInt64) -> [UInt8] {
        var text = ArraySlice(uri)
        while let l = text.last, l == 0x20 || l == 0x09 || l == 0x0A || l == 0x0D { text = text.dropLast() }
        let value = Array(String(counter).utf8)
        guard let q = text.firstIndex(of: UInt8(ascii: "?")) else {
            return Array(text) + Array("?counter=".utf8) + value
        }
        var out = Array(text[...q])
        var found = false
        var first = true
        for pair in text[text.index(after: q)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            if !first { out.append(UInt8(ascii: "&")) }
            first = false
            let eq = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            if !found, pair[..<eq].map(lower) == Array("counter".utf8) {
                out += Array("counter=".utf8) + value
                found = true
            } else {
                out += pair
            }
        }
        if !found { out += Array(((out.last == UInt8(ascii: "?") ? "" : "&") + "counter=").utf8) + value }
        return out
    }

    /// ASCII lower case of one byte.
    private static func lower(_ b: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) ? b + 32 : b
    }

    /// `%XX` decoded (`+` is kept: otpauth URIs write a space as %20); nil for a `%` not
    /// followed by two hex digits.
    private static func percentDecoded(_ s: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == UInt8(ascii: "%") {
                guard i + 2 < s.endIndex, let hi = hex(s[i + 1]), let lo = hex(s[i + 2]) else {
                    Sodium.wipe(&out)
                    return nil
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }

    /// The value of one hexadecimal digit.
    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
