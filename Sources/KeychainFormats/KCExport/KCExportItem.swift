import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// One item of kc's export: its class, every attribute (dates included) and its secret, in
/// the shape `kc find --json -g` prints (`docs/import-export.md`, "Export").
///
///     {"class":"generic","attributes":{"service":"db","account":"app",…},"data":"czNjcmV0"}
package struct KCExportItem: Decodable, Equatable {
    /// "generic", "internet", "certificate" or "key".
    package var className: String
    /// Raw attribute keys (`kSecAttrService`, …) to values; names are translated at the
    /// JSON boundary (`AttributeNames`).
    package var attributes: [String: KCExportValue]
    /// The secret; nil when the item has none.
    package var data: Data?

    /// The class names of the document → `kSecClass` values.
    package static let classes: [String: String] = [
        "generic": kSecClassGenericPassword, "internet": kSecClassInternetPassword,
        "certificate": kSecClassCertificate, "key": kSecClassKey
    ]

    /// Attribute names as kc prints them → raw keys.
    package static let keysByName: [String: String] = {
        var out: [String: String] = [:]
        for (key, name) in AttributeNames.byKey { out[name] = key }
        return out
    }()

    /// An item as the keychain returned it (`kSecReturnAttributes`, `kSecReturnData`).
    package init(className: String, attributes: [String: Any], data: Data?) {
        self.className = className
        self.attributes = attributes.mapValues(KCExportValue.init(any:))
        self.data = data
    }

    /// Reads one element of `"items"`.
    /// - Throws: errSecParam saying what is wrong with it: not an object, an unknown class
    ///   or attribute name, a value of the wrong type, base64 that does not decode.
    package init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: Key.self) else {
            throw KeychainError(errSecParam, "an item is not a JSON object")
        }
        guard let name = try? container.decode(String.self, forKey: Key("class")), Self.classes[name] != nil else {
            throw KeychainError(errSecParam, "\"class\" must be generic, internet, certificate or key")
        }
        className = name
        attributes = [:]
        if container.contains(Key("attributes")) {
            guard let list = try? container.nestedContainer(keyedBy: Key.self, forKey: Key("attributes")) else {
                throw KeychainError(errSecParam, "\"attributes\" is not a JSON object")
            }
            for codingKey in list.allKeys {
                guard let key = Self.keysByName[codingKey.stringValue] else {
                    throw KeychainError(errSecParam, "unknown attribute \"\(codingKey.stringValue)\"")
                }
                attributes[key] = try KCExportValue.decode(from: list, forKey: codingKey, name: codingKey.stringValue, key: key)
            }
        }
        if container.contains(Key("data")) {
            guard let text = try? container.decode(String.self, forKey: Key("data")), let bytes = Data(base64Encoded: text) else {
                throw KeychainError(errSecParam, "\"data\" is not valid base64")
            }
            data = bytes
        }
    }

    /// The item as one JSON object, written by the same code as `kc find --json`
    /// (`ItemJSON`), binary values always as `{"base64": …}`.
    package var json: String {
        ItemJSON.json(className: className, attributes: attributes.mapValues(\.any), secret: data, exact: true)
    }

    /// The item to import: an add query, with the creation and modification dates apart.
    package func importItem(source: String) -> ImportItem {
        var query: [String: Any] = [kSecClass: Self.classes[className] ?? kSecClassGenericPassword]
        var created: Date?, modified: Date?
        for (key, value) in attributes {
            switch (key, value) {
            case (kSecAttrCreationDate, .date(let date)): created = date
            case (kSecAttrModificationDate, .date(let date)): modified = date
            default: query[key] = value.any
            }
        }
        if let data { query[kSecValueData] = data }
        return ImportItem(query: query, created: created, modified: modified, source: source)
    }

    /// The item's name in the import report: its label, service or server, else its class.
    package var name: String {
        for key in [kSecAttrLabel, kSecAttrService, kSecAttrServer] {
            if case .string(let s)? = attributes[key] { return s }
        }
        return className
    }

    /// Any JSON object key.
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
