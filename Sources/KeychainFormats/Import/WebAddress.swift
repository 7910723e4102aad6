import KeychainCore

/// A URL split as Apple's internet passwords store it: protocol, user, server, port and
/// the rest (path, query, fragment) as the path.
package struct WebAddress: Equatable {
    package var scheme: String
    package var user: String?
    package var password: String?
    package var host: String
    package var port: Int?
    /// Everything after the host and port, "" when nothing or just "/".
    package var path: String

    /// Parses `scheme://[user[:password]@]host[:port][/path…]`; an address without a scheme
    /// ("example.com/login") is taken as https. Nil when there is no host or the port is not
    /// a number from 1 to 65535.
    package init?(_ text: String) {
        var rest = Substring(text.trimmingSpaces)
        if let range = rest.firstRange(of: "://") {
            scheme = rest[..<range.lowerBound].lowercased()
            guard !scheme.isEmpty, scheme.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || "+-.0123456789".unicodeScalars.contains($0) })
            else { return nil }
            rest = rest[range.upperBound...]
        } else {
            guard !rest.isEmpty, !rest.contains(" "), !rest.hasPrefix("/"), rest.contains(".") else { return nil }
            scheme = "https"
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let tail = String(rest[authorityEnd...])
        path = tail == "/" ? "" : tail
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = Self.percentDecoded(userInfo[..<colon])
                password = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
            } else {
                user = Self.percentDecoded(userInfo)
            }
        }
        var hostPart = authority
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {   // [IPv6]:port
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            if !digits.isEmpty {
                guard let p = Int(digits), (1...65535).contains(p) else { return nil }
                port = p
            }
        }
        host = hostPart.lowercased()
        guard !host.isEmpty, !host.contains(" ") else { return nil }
    }

    /// `text` without a `user:password@` before its host, for places that are printed
    /// (a generic password's service, the comment).
    package static func withoutUserInfo(_ text: String) -> String {
        guard let schemeEnd = text.firstRange(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<schemeEnd.upperBound]) + String(rest[rest.index(after: at)...])
    }

    /// The URL an internet password's attributes stand for: scheme (from its protocol code;
    /// https when kc has no name for it), server, port when not 0, and path.
    package static func url(ofInternetPassword attributes: [String: Any]) -> String {
        let scheme = FourCC.scheme(forProtocol: attributes[kSecAttrProtocol] as? String ?? "") ?? "https"
        let port = attributes[kSecAttrPort] as? Int ?? 0
        return "\(scheme)://\(attributes[kSecAttrServer] as? String ?? "")\(port > 0 ? ":\(port)" : "")\(attributes[kSecAttrPath] as? String ?? "")"
    }

    /// Apple's four-character protocol code for the scheme, nil for schemes Apple has none for.
    package var protocolCode: String? { FourCC.protocols[scheme] }

    /// The address again: scheme://host[:port]path (no user or password).
    package var text: String {
        "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(path)"
    }

    /// `%XX` escapes decoded; nil when they do not decode to UTF-8.
    package static func percentDecoded(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = s.utf8.startIndex
        let utf8 = s.utf8
        while i < utf8.endIndex {
            let b = utf8[i]
            if b == UInt8(ascii: "%"), let h1 = utf8.index(i, offsetBy: 1, limitedBy: utf8.endIndex), h1 < utf8.endIndex,
                let h2 = utf8.index(i, offsetBy: 2, limitedBy: utf8.endIndex), h2 < utf8.endIndex,
                let hi = hexValue(utf8[h1]), let lo = hexValue(utf8[h2])
            {
                bytes.append(hi << 4 | lo)
                i = utf8.index(i, offsetBy: 3)
            } else {
                bytes.append(b)
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986).
    package static func percentEncoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            let c = Character(Unicode.Scalar(b))
            if b < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c)) {
                out.append(c)
            } else {
                let h = String(b, radix: 16, uppercase: true)
                out += "%" + (h.count == 1 ? "0" + h : h)
            }
        }
        return out
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
