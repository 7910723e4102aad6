#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One attribute value after validation; what is stored (encrypted) and matched.
package enum AttributeValue: Hashable, Sendable {
    case string(String)
    case data([UInt8])
    case int(Int64)
    case date(Double)
    /// A Secret Service attribute map (kc extension, `kcAttrSecretServiceAttributes`).
    case map(AttributeMap)

    /// The bytes compared for string and data values (UTF-8 for strings: byte-exact, no
    /// Unicode normalisation, unlike Swift's `String ==`).
    var comparableBytes: [UInt8]? {
        switch self {
        case .string(let s): return Array(s.utf8)
        case .data(let d): return d
        case .int, .date, .map: return nil
        }
    }

    /// Whether this is a map with no pair: the value that means "no map" (`docs/format.md` §7).
    var isEmptyMap: Bool {
        if case .map(let m) = self { return m.isEmpty }
        return false
    }

    /// Byte-exact equality as Apple's hashed columns compare (string and data with equal
    /// bytes are equal); with `textMatch`, a prefix or substring of `self` (the item's value)
    /// equal to `other` (the query's) matches too.
    func matches(_ other: AttributeValue, ignoringCase: Bool, textMatch: TextMatch = .exact) -> Bool {
        switch (self, other) {
        case (.int(let a), .int(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        // Whole maps: equal pairs, byte for byte, ignore-case or not (Secret Service
        // attributes are case-sensitive). A query's subset rule is `Keychain.matches`'.
        case (.map(let a), .map(let b)): return a == b
        default:
            guard let a = comparableBytes, let b = other.comparableBytes else { return false }
            if textMatch.accepts(a, b) { return true }
            guard ignoringCase,
                let sa = String(validating: a, as: UTF8.self), let sb = String(validating: b, as: UTF8.self)
            else { return false }
            // kc extension (docs/design.md): lowercase both sides, then compare the bytes
            // (whole, prefix or substring). Bytes that are not UTF-8 compare exactly (never
            // through U+FFFD).
            return textMatch.accepts(Array(sa.lowercased().utf8), Array(sb.lowercased().utf8))
        }
    }

    /// The injective, type-tagged encoding hashed by blind indexes (`docs/format.md` §5):
    /// tag 1 bytes (string or data), tag 2 integer (8 bytes BE), tag 3 date (IEEE bits BE),
    /// tag 4 map (its canonical encoding, `AttributeMap.encode`).
    var indexEncoding: [UInt8] {
        var w = ByteWriter()
        switch self {
        case .string, .data:
            w.u8(1)
            w.lengthPrefixed(comparableBytes ?? [])
        case .int(let v):
            w.u8(2)
            w.u64(UInt64(bitPattern: v))
        case .date(let d):
            w.u8(3)
            w.u64(d.bitPattern)
        case .map(let m):
            w.u8(4)
            m.encode(into: &w)
        }
        return w.bytes
    }

    /// The value as Apple's API returns it: `String`, `Data`, `Int`, `Bool` or `Date` (and
    /// `[String: String]` for a map).
    func publicValue(kind: AttributeKind) -> Any {
        switch self {
        case .string(let s): return s
        case .data(let d): return Data(d)
        case .int(let v): return kind == .bool ? (v != 0) : Int(v)
        case .date(let t): return Date(timeIntervalSinceReferenceDate: t)
        case .map(let m): return m.dictionary
        }
    }

    /// Converts a value from a query dictionary, following Apple's rules for the kind
    /// (`SecDbItem.c` copyBlob / copyData / copyString / copyNumber / copyDate).
    /// - Returns: nil when the value has the wrong type (the caller throws errSecParam).
    static func from(_ value: Any, kind: AttributeKind) -> AttributeValue? {
        switch kind {
        case .blob:
            if let s = value as? String { return .string(s) }
            if let d = bytes(of: value) { return .data(d) }
            if let n = integer(of: value) { return .int(n) }
            return nil
        case .data:
            if let d = bytes(of: value) { return .data(d) }
            if let s = value as? String { return .data(Array(s.utf8)) }
            return nil
        case .string:
            if let s = value as? String { return .string(s) }
            if let d = bytes(of: value) {
                guard let s = String(validating: d, as: UTF8.self) else { return nil }
                return .string(s)
            }
            return nil
        case .number, .bool:
            if let b = value as? Bool { return .int(b ? 1 : 0) }
            if let n = integer(of: value) { return .int(n) }
            if let s = value as? String {
                if let n = Int64(s) { return .int(n) }
                return kind == .number ? .string(s) : nil
            }
            return nil
        case .date:
            if let d = value as? Date { return .date(d.timeIntervalSinceReferenceDate) }
            return nil
        case .map:
            return (try? AttributeMap(parsing: value, key: "")).map { .map($0) }
        }
    }

    private static func bytes(of value: Any) -> [UInt8]? {
        if let d = value as? Data { return Array(d) }
        if let a = value as? [UInt8] { return a }
        return nil
    }

    private static func integer(of value: Any) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        case let v as UInt32: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as Double: return Int64(exactly: v)
        default: return nil
        }
    }
}
