#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Shapes results as Apple's SecItem functions return them
/// (docs/apple-compatibility.md, "Results"): one requested thing alone is
/// returned bare (`Data` or a dictionary); two or more give a dictionary of the attributes
/// with `v_Data` and `v_PersistentRef` added.
enum Results {
    /// The attribute dictionary of an item, with Apple's value types.
    static func attributes(_ attributes: [String: AttributeValue]) -> [String: Any] {
        var out: [String: Any] = [:]
        for (key, value) in attributes {
            out[key] = value.publicValue(kind: Schema.attributes[key]?.kind ?? .blob)
        }
        return out
    }

    /// One item's result, or nil when nothing was asked for (or only data, and it has none).
    static func item(_ attributes: [String: AttributeValue], persistentRef: [UInt8], data dataValue: Data?, query: ItemQuery) -> Any? {
        let asked = [query.returnData, query.returnAttributes, query.returnPersistentRef].filter { $0 }.count
        if asked == 0 { return nil }
        if asked == 1 {
            if query.returnData { return dataValue }
            if query.returnPersistentRef { return Data(persistentRef) }
            return Self.attributes(attributes)
        }
        var dict = Self.attributes(attributes)
        if let dataValue { dict[kSecValueData] = dataValue }
        if query.returnPersistentRef { dict[kSecValuePersistentRef] = Data(persistentRef) }
        return dict
    }
}
