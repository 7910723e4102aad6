/// One D-Bus value, read from or written to a message by `BusMessage` through sd-bus (no
/// wire code of ours): the types the Secret Service API uses, and enough of the rest to
/// read any message a client sends and refuse it cleanly when it has the wrong shape.
package indirect enum BusValue: Equatable, Sendable {
    case string(String)
    case objectPath(String)
    case signature(String)
    case boolean(Bool)
    case byte(UInt8)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// `ay`, kept as bytes (secrets, session keys).
    case bytes([UInt8])
    /// `a` of any other element type; `element` is its signature.
    case array(element: String, [BusValue])
    /// `a{KV}`; `key` and `value` are the signatures of the entries' parts.
    case dictionary(key: String, value: String, [DictionaryEntry])
    case structure([BusValue])
    case variant(BusValue)

    /// One `{key, value}` of a dictionary.
    package struct DictionaryEntry: Equatable, Sendable {
        package var key: BusValue
        package var value: BusValue
        package init(_ key: BusValue, _ value: BusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's D-Bus signature.
    package var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .boolean: return "b"
        case .byte: return "y"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    /// An `ao`.
    package static func objectPaths(_ paths: [String]) -> BusValue { .array(element: "o", paths.map(BusValue.objectPath)) }

    /// An `a{ss}`.
    package static func stringMap(_ map: [String: String]) -> BusValue {
        .dictionary(key: "s", value: "s", map.sorted { $0.key < $1.key }.map { DictionaryEntry(.string($0.key), .string($0.value)) })
    }

    /// An `a{sv}`.
    package static func properties(_ entries: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", entries.map { DictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    // What a method reads from its arguments; nil when the value has another type.

    package var string: String? { if case .string(let s) = self { return s }; return nil }
    package var objectPath: String? { if case .objectPath(let s) = self { return s }; return nil }
    package var boolean: Bool? { if case .boolean(let b) = self { return b }; return nil }
    package var byteArray: [UInt8]? {
        if case .bytes(let b) = self { return b }
        if case .array("y", let items) = self, items.isEmpty { return [] }
        return nil
    }
    /// The content of a variant.
    package var unwrapped: BusValue { if case .variant(let v) = self { return v.unwrapped }; return self }

    /// The paths of an `ao`.
    package var objectPaths: [String]? {
        guard case .array("o", let items) = self else { return nil }
        return items.compactMap(\.objectPath)
    }

    /// The entries of an `a{ss}`; nil when it is another type or names a key twice.
    package var stringMap: [String: String]? {
        guard case .dictionary("s", "s", let entries) = self else { return nil }
        var map: [String: String] = [:]
        for entry in entries {
            guard let k = entry.key.string, let v = entry.value.string, map[k] == nil else { return nil }
            map[k] = v
        }
        return map
    }

    /// The entries of an `a{sv}` (variants unwrapped); nil for another type.
    package var propertyMap: [String: BusValue]? {
        guard case .dictionary("s", "v", let entries) = self else { return nil }
        var map: [String: BusValue] = [:]
        for entry in entries {
            guard let k = entry.key.string else { return nil }
            map[k] = entry.value.unwrapped
        }
        return map
    }
}
