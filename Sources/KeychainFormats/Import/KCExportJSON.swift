import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// kc's own export (`kc export`, format "kc-export" version 1): every class and attribute,
/// dates kept, so export → import → export gives the same document.
package enum KCExportJSON {
    /// Attribute names as kc prints them → raw keys.
    package static let keysByName: [String: String] = {
        var out: [String: String] = [:]
        for (key, name) in AttributeNames.byKey { out[name] = key }
        return out
    }()

    package static let classes: [String: String] = [
        "generic": kSecClassGenericPassword, "internet": kSecClassInternetPassword,
        "certificate": kSecClassCertificate, "key": kSecClassKey,
    ]

    package static func entries(_ document: JSONValue) throws -> [ImportEntry] {
        guard let version = document["version"]?.int else {
            throw KeychainError(errSecParam, "a kc export has a \"version\"; this one has none")
        }
        guard version == 1 else {
            throw KeychainError(errSecWrongSecVersion, "this kc export has version \(version); this kc reads version 1",
                                hint: "import it with the kc that wrote it, or a newer one")
        }
        guard let items = document["items"]?.array else {
            throw KeychainError(errSecParam, "a kc export has an \"items\" list; this one has none")
        }
        return items.enumerated().map { index, item in entry(item, source: "item \(index + 1)") }
    }

    package static func entry(_ item: JSONValue, source: String) -> ImportEntry {
        guard let className = item["class"]?.string, let secClass = classes[className] else {
            return .failed(source, .malformed("\"class\" must be generic, internet, certificate or key"))
        }
        var query: [String: Any] = [kSecClass: secClass]
        var created: Date?, modified: Date?
        for (name, value) in item["attributes"]?.object ?? [:] {
            guard let key = keysByName[name] else { return .failed(source, .malformed("unknown attribute \"\(name)\"")) }
            switch value {
            case .string(let s):
                if key == kSecAttrCreationDate || key == kSecAttrModificationDate || key == kSecAttrStartDate || key == kSecAttrEndDate {
                    guard let date = ImportDates.iso8601(s) else { return .failed(source, .malformed("\"\(name)\" is not an ISO 8601 date")) }
                    if key == kSecAttrCreationDate { created = date } else if key == kSecAttrModificationDate { modified = date } else { query[key] = date }
                } else {
                    query[key] = s
                }
            case .int(let n): query[key] = Int(n)
            case .bool(let b): query[key] = b
            case .object(let o):
                guard let b64 = o["base64"]?.string, let data = Data(base64Encoded: b64) else {
                    return .failed(source, .malformed("\"\(name)\" is an object without valid \"base64\""))
                }
                query[key] = data
            default:
                return .failed(source, .malformed("\"\(name)\" has a value of the wrong type"))
            }
        }
        if let b64 = item["data"]?.string {
            guard let data = Data(base64Encoded: b64) else { return .failed(source, .malformed("\"data\" is not valid base64")) }
            query[kSecValueData] = data
        }
        let name = (query[kSecAttrLabel] as? String) ?? (query[kSecAttrService] as? String) ?? (query[kSecAttrServer] as? String) ?? className
        return ImportEntry(source: source, name: name, items: [ImportItem(query: query, created: created, modified: modified, source: source)])
    }
}
