#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import KeychainCore
import KeychainFormats
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Prints items: `name: value` lines for people, JSON for programs, raw bytes for `-w`.
enum ItemPrinter {
    /// One item as text lines; `secret` adds a `secret:` line (kc find -g). `class:` first,
    /// then the attributes in `AttributeNames.ordered`'s order (the leading ones, then the
    /// rest by name); coded values by name, certificate names as RFC 4514 text (`textValue`).
    static func text(className: String, attributes: [String: Any], secret: Data?) -> String {
        var lines = ["class: \(className)"]
        for (name, value) in AttributeNames.ordered(attributes) {
            lines.append("\(name): \(textValue(value, name: name, className: className))")
        }
        if let secret { lines.append("secret: \(textValue(secret, name: "secret"))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Attributes that hold bytes which are never text (DER, hashes, serial numbers): always
    /// hex, even when the bytes happen to be valid UTF-8.
    static let binaryAttributes = ["serial-number", "public-key-hash", "subject-key-id", "application-label"]

    /// One attribute's value for people: a coded value by its name (`AttributeCodes`), an
    /// issuer or subject as a distinguished name, binary values as `0x` hex, text as is
    /// (quoted when it has control characters), dates in ISO 8601.
    static func textValue(_ value: Any, name: String, className: String = "") -> String {
        if let named = AttributeCodes.name(of: value, attribute: name, className: className) { return named }
        if let d = value as? Data {
            if name == "issuer" || name == "subject", let dn = DistinguishedName.string(der: Array(d)) { return printable(dn) }
            if binaryAttributes.contains(name) { return "0x" + hex(Array(d)) }
        }
        switch value {
        case let s as String: return printable(s)
        case let d as Data:
            if let s = String(validating: Array(d), as: UTF8.self) { return printable(s) }
            return "0x" + hex(Array(d))
        case let b as Bool: return b ? "true" : "false"
        case let n as Int:
            if name == "creator" || (name == "type" && className != "key"), let code = fourCharacters(n) { return "\(n) ('\(code)')" }
            return String(n)
        case let date as Date: return ISO8601.string(date)
        // A Secret Service map: one JSON object on its line, unambiguous whatever it holds.
        case let map as [String: Any]: return ItemJSON.mapObject(map)
        default: return String(describing: value)
        }
    }

    /// Plain text as is; text with control characters (`TerminalSafe.isControl`: C0, DEL,
    /// C1, bidi formatting), quotes or edge spaces quoted as JSON, whose escapes are
    /// TerminalSafe's.
    static func printable(_ s: String) -> String {
        let needsQuotes = s.isEmpty || s.first == " " || s.last == " " || s.first == "\"" || TerminalSafe.hasControl(s)
        return needsQuotes ? JSON.string(s) : s
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static func fourCharacters(_ n: Int) -> String? {
        guard n > 0xFFFFFF, n <= 0xFFFF_FFFF else { return nil }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: n >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
