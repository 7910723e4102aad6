import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One item as JSON, as `kc find --json` prints it and kc's export holds it.
public enum ItemJSON {
    /// One item as a JSON object: `{"class": …, "attributes": {…}, "data": base64}`.
    /// - Parameter exact: binary values always as `{"base64": …}`, even when they happen to
    ///   be UTF-8, so the type survives (kc export); otherwise such bytes print as text.
    public static func json(className: String, attributes: [String: Any], secret: Data?, exact: Bool = false) -> String {
        var fields = [("class", JSON.string(className))]
        let attrs = AttributeNames.ordered(attributes).map { ($0.0, jsonValue($0.1, name: $0.0, exact: exact)) }
        fields.append(("attributes", JSON.object(attrs)))
        if let secret { fields.append(("data", JSON.string(secret.base64EncodedString()))) }
        return JSON.object(fields)
    }

    /// One attribute value as JSON.
    public static func jsonValue(_ value: Any, name: String, exact: Bool = false) -> String {
        switch value {
        case let s as String: return JSON.string(s)
        case let d as Data:
            if !exact, let s = String(validating: Array(d), as: UTF8.self) { return JSON.string(s) }
            return JSON.object([("base64", JSON.string(d.base64EncodedString()))])
        case let b as Bool: return b ? "true" : "false"
        case let n as Int: return String(n)
        case let date as Date: return JSON.string(ISO8601.string(date))
        case let map as [String: Any]: return mapObject(map)
        default: return JSON.string(String(describing: value))
        }
    }

    /// A Secret Service attribute map as a JSON object of strings, its names in byte order
    /// (the order kc stores them in), so the same map always prints the same.
    public static func mapObject(_ map: [String: Any]) -> String {
        let names = map.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return JSON.object(
            names.map { name in
                let value = map[name]
                return (name, JSON.string(value as? String ?? value.map { String(describing: $0) } ?? ""))
            })
    }
}
