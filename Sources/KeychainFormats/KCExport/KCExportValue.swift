import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// One attribute value of kc's export (`docs/import-export.md`, "Export"): text, a number,
/// a flag, a date (ISO 8601, UTC, whole seconds), bytes (always `{"base64": …}`, even
/// when they happen to be UTF-8, so the type survives the round trip) or a Secret Service
/// map (an object of strings).
///
///     KCExportValue(any: 8443)          // .int(8443), written 8443
///     KCExportValue(any: Data([0xFF]))  // .data(…), written {"base64":"/w=="}
package enum KCExportValue: Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case date(Date)
    case data(Data)
    /// A Secret Service attribute map (`kcAttrSecretServiceAttributes`), written as a JSON
    /// object of strings.
    case map([String: String])

    /// The value of an attribute as the keychain returns it; a type kc has no JSON form for
    /// is kept as its description, as `kc find --json` prints it.
    package init(any value: Any) {
        switch value {
        case let s as String: self = .string(s)
        case let d as Data: self = .data(d)
        case let b as Bool: self = .bool(b)
        case let n as Int: self = .int(n)
        case let date as Date: self = .date(date)
        case let map as [String: Any]: self = .map(map.mapValues { $0 as? String ?? String(describing: $0) })
        default: self = .string(String(describing: value))
        }
    }

    /// The value as the keychain takes it in a query.
    package var any: Any {
        switch self {
        case .string(let s): return s
        case .int(let n): return n
        case .bool(let b): return b
        case .date(let date): return date
        case .data(let d): return d
        case .map(let m): return m
        }
    }

    /// The keys whose values are dates: an ISO 8601 string there is read as a date.
    package static let dateKeys: Set<String> = [kSecAttrCreationDate, kSecAttrModificationDate, kSecAttrStartDate, kSecAttrEndDate]

    /// Reads the value of the attribute `name` (printed name, for messages) whose raw key is `key`.
    /// - Throws: errSecParam naming the attribute when the value is null, an array, a
    ///   fraction, an object without valid `"base64"`, or not an ISO 8601 date where one
    ///   belongs.
    package static func decode<K: CodingKey>(
        from container: KeyedDecodingContainer<K>, forKey codingKey: K,
        name: String, key: String
    ) throws -> KCExportValue {
        if (try? container.decodeNil(forKey: codingKey)) == true {
            throw KeychainError(errSecParam, "\"\(name)\" has a value of the wrong type")
        }
        // A map's object is its pairs (a pair named "base64" included), nothing else.
        if key == kcAttrSecretServiceAttributes {
            guard let map = try? container.decode([String: String].self, forKey: codingKey) else {
                throw KeychainError(errSecParam, "\"\(name)\" must be a JSON object of strings")
            }
            return .map(map)
        }
        if let b = try? container.decode(Bool.self, forKey: codingKey) { return .bool(b) }
        if let n = try? container.decode(Int.self, forKey: codingKey) { return .int(n) }
        if let s = try? container.decode(String.self, forKey: codingKey) {
            guard dateKeys.contains(key) else { return .string(s) }
            guard let date = ImportDates.iso8601(s) else { throw KeychainError(errSecParam, "\"\(name)\" is not an ISO 8601 date") }
            return .date(date)
        }
        if let object = try? container.nestedContainer(keyedBy: Base64Key.self, forKey: codingKey) {
            guard let text = try? object.decode(String.self, forKey: .base64), let data = Data(base64Encoded: text) else {
                throw KeychainError(errSecParam, "\"\(name)\" is an object without valid \"base64\"")
            }
            return .data(data)
        }
        throw KeychainError(errSecParam, "\"\(name)\" has a value of the wrong type")
    }

    private enum Base64Key: String, CodingKey { case base64 }
}
