import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// A parsed JSON document, for the JSON import formats (kc's export, Bitwarden's).
/// FoundationEssentials has JSONDecoder but no JSONSerialization; this decodes any shape.
package enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var out: [JSONValue] = []
            while !list.isAtEnd { out.append(try list.decode(JSONValue.self)) }
            self = .array(out)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var out: [String: JSONValue] = [:]
            for key in object.allKeys { out[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(out)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let b = try? single.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? single.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? single.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Parses a whole document. - Throws: errSecParam naming what is wrong.
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch let DecodingError.dataCorrupted(context) {
            throw KeychainError(errSecParam, "the input is not valid JSON: \(context.debugDescription)")
        } catch {
            throw KeychainError(errSecParam, "the input is not valid JSON")
        }
    }

    package subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    package var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    package var array: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    package var object: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    package var int: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    package var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// A string, or a number or boolean written as text; "" for null or absent.
    package var text: String {
        switch self {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        default: return ""
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
