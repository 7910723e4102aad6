#if os(Linux)
import Foundation

/// Turns what Apple-style code passes (an `NSDictionary` of bridged objects, Swift values,
/// optionals such as `kCFBooleanTrue`) into the plain Swift dictionary KeychainCore reads,
/// and KeychainCore's results into the objects Apple's API returns.
enum QueryBridge {
    /// The class of Foundation's boolean numbers (Core Foundation's CFBoolean).
    private static let booleanClass: AnyClass = type(of: NSNumber(value: true))

    /// A query or attributes dictionary as KeychainCore reads it.
    /// - Throws: errSecParam for a key that is not a string or a value that is nil or of no
    ///   keychain type.
    static func query(_ dictionary: NSDictionary) throws -> [String: Any] {
        var out: [String: Any] = [:]
        for (rawKey, rawValue) in dictionary {
            guard let key = rawKey as? String else {
                throw KeychainError(errSecParam, "a query key is not a string: \(rawKey)")
            }
            out[key] = try value(rawValue, key: key)
        }
        return out
    }

    private static func value(_ raw: Any, key: String) throws -> Any {
        guard let unwrapped = unwrap(raw) else {
            throw KeychainError(errSecParam, "the value of \(key) is nil")
        }
        // Swift values pass as they are (a list's elements are looked at one by one).
        guard type(of: unwrapped) is AnyClass else {
            if unwrapped is [UInt8] { return unwrapped }
            if let list = unwrapped as? [Any] { return try list.map { try value($0, key: key) } }
            // A map (kcAttrSecretServiceAttributes): its values looked at one by one too.
            if let map = unwrapped as? [String: Any] { return try map.mapValues { try value($0, key: key) } }
            return unwrapped
        }
        // Bridged objects become Swift values: a CFBoolean (kCFBooleanTrue, NSNumber(value:
        // true)) a Bool, any other number an Int or Double, which KeychainCore refuses where
        // Apple wants a CFBoolean (kSecReturnData: 1 is errSecParam on both).
        if let number = unwrapped as? NSNumber {
            if type(of: number) == booleanClass { return number.boolValue }
            if let exact = Int(exactly: number.doubleValue) { return exact }
            return number.doubleValue
        }
        if let string = unwrapped as? String { return string }
        if let data = unwrapped as? Data { return data }
        if let date = unwrapped as? Date { return date }
        if let list = unwrapped as? [Any] { return try list.map { try value($0, key: key) } }
        if let map = unwrapped as? NSDictionary {
            var out: [String: Any] = [:]
            for (name, element) in map {
                guard let name = name as? String else {
                    throw KeychainError(errSecParam, "a name in the value of \(key) is not a string: \(name)")
                }
                out[name] = try value(element, key: key)
            }
            return out
        }
        return unwrapped
    }

    /// The value inside any level of Optional, or nil.
    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let inner = mirror.children.first?.value else { return nil }
        return unwrap(inner)
    }

    /// A result as Apple's API gives it: `Data` for data alone, a dictionary of attributes
    /// (booleans as numbers 0 and 1, as Apple returns them), an array for several items.
    static func result(_ value: Any) -> CFTypeRef {
        switch value {
        case let items as [[String: Any]]:
            return items.map(attributes) as NSArray
        case let item as [String: Any]:
            return attributes(item) as NSDictionary
        case let refs as [Data]:
            return refs as NSArray
        default:
            return value as AnyObject
        }
    }

    private static func attributes(_ item: [String: Any]) -> [String: Any] {
        item.mapValues { value in
            if let flag = value as? Bool, type(of: value) == Bool.self { return NSNumber(value: flag ? 1 : 0) }
            return value
        }
    }
}
#endif
