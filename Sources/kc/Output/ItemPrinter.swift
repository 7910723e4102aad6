import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Prints items: `name: value` lines for people, JSON for programs, raw bytes for `-w`.
enum ItemPrinter {
    /// One item as text lines; `secret` adds a `secret:` line (kc find -g).
    static func text(className: String, attributes: [String: Any], secret: Data?) -> String {
        var lines = ["class: \(className)"]
        for (name, value) in AttributeNames.ordered(attributes) {
            lines.append("\(name): \(textValue(value, name: name))")
        }
        if let secret { lines.append("secret: \(textValue(secret, name: "secret"))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One item as a JSON object: `{"class": …, "attributes": {…}, "data": base64}`.
    /// - Parameter exact: binary values always as `{"base64": …}`, even when they happen to
    ///   be UTF-8, so the type survives (kc export); otherwise such bytes print as text.
    static func json(className: String, attributes: [String: Any], secret: Data?, exact: Bool = false) -> String {
        var fields = [("class", JSON.string(className))]
        let attrs = AttributeNames.ordered(attributes).map { ($0.0, jsonValue($0.1, name: $0.0, exact: exact)) }
        fields.append(("attributes", JSON.object(attrs)))
        if let secret { fields.append(("data", JSON.string(secret.base64EncodedString()))) }
        return JSON.object(fields)
    }

    static func textValue(_ value: Any, name: String) -> String {
        switch value {
        case let s as String: return printable(s)
        case let d as Data:
            if let s = String(validating: Array(d), as: UTF8.self) { return printable(s) }
            return "0x" + hex(Array(d))
        case let b as Bool: return b ? "true" : "false"
        case let n as Int:
            if name == "creator" || name == "type", let code = fourCharacters(n) { return "\(n) ('\(code)')" }
            return String(n)
        case let date as Date: return iso8601(date)
        default: return String(describing: value)
        }
    }

    static func jsonValue(_ value: Any, name: String, exact: Bool = false) -> String {
        switch value {
        case let s as String: return JSON.string(s)
        case let d as Data:
            if !exact, let s = String(validating: Array(d), as: UTF8.self) { return JSON.string(s) }
            return JSON.object([("base64", JSON.string(d.base64EncodedString()))])
        case let b as Bool: return b ? "true" : "false"
        case let n as Int: return String(n)
        case let date as Date: return JSON.string(iso8601(date))
        default: return JSON.string(String(describing: value))
        }
    }

    /// Plain text as is; text with control characters, quotes or edge spaces quoted as JSON.
    static func printable(_ s: String) -> String {
        let needsQuotes = s.isEmpty || s.first == " " || s.last == " " || s.first == "\""
            || s.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        return needsQuotes ? JSON.string(s) : s
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func fourCharacters(_ n: Int) -> String? {
        guard n > 0xFFFFFF, n <= 0xFFFF_FFFF else { return nil }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: n >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-11-22T06:34:35Z` (UTC, whole seconds).
    static func iso8601(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

/// A minimal JSON writer with a stable field order.
enum JSON {
    static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let h = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ",") + "]"
    }
}
