#if os(Linux)
import KeychainCore
import Foundation

/// Turns what Apple-style code passes (an `NSDictionary` of bridged objects, Swift values,
/// optionals such as `kCFBooleanTrue`) into the plain Swift dictionary KeychainCore reads,
/// and KeychainCore's results into the objects Apple's API returns.
enum QueryBridge {
    /// The class of Foundation's boolean numbers (Core Foundation's CFBoolean).
    private static let booleanClass: AnyClass = type(of: NSNumber(value: true))

    /// What a dictionary handed to the Security API is for.
    enum Use {
        /// SecItemAdd's attributes.
        case add
        /// SecItemCopyMatching's query.
        case search
        /// The query of SecItemUpdate or SecItemDelete, which act on every match.
        case target
        /// SecItemUpdate's `attributesToUpdate`.
        case changes
    }

    /// A query or attributes dictionary as KeychainCore reads it; a `kSecAttrAccessControl`
    /// object becomes `kSecAttrAccessible` and `kcAttrAccessControlFlags` (see
    /// `accessControl(in:changes:)`).
    /// - Parameter use: what the dictionary is for.
    /// - Throws: errSecParam for a key that is not a string or a value that is nil or of no
    ///   keychain type; errSecUnimplemented for what kc cannot offer (kSecAttrTokenID,
    ///   the flags `.privateKeyUsage` and `.applicationPassword`).
    static func query(_ dictionary: NSDictionary, for use: Use) throws -> [String: Any] {
        var out: [String: Any] = [:]
        for (rawKey, rawValue) in dictionary {
            guard let key = rawKey as? String else {
                throw KeychainError(errSecParam, "a query key is not a string: \(rawKey)")
            }
            out[key] = try value(rawValue, key: key)
        }
        if out[kSecAttrTokenID] != nil {
            throw KeychainError(errSecUnimplemented, "kSecAttrTokenID (a Secure Enclave or other hardware token) is not supported by kc")
        }
        try accessControl(in: &out, for: use)
        // Code written for macOS passes kSecMatchLimitAll to SecItemUpdate and SecItemDelete
        // (macOS's file keychain would act on the first match alone without it; its data
        // protection path drops it). kc acts on every match: it is dropped here too. Any
        // other kSecMatch… key there stays errSecParam, as on iOS.
        if use == .target, let limit = out[kSecMatchLimit] as? String, limit == kSecMatchLimitAll {
            out[kSecMatchLimit] = nil
        }
        // Apple gives no reference for a password and no error either (refs exist only for
        // certificates, keys and identities): kSecReturnRef is dropped for passwords.
        if let itemClass = out[kSecClass] as? String,
            itemClass == kSecClassGenericPassword || itemClass == kSecClassInternetPassword
        {
            out[kSecReturnRef] = nil
        }
        return out
    }

    /// Replaces a `kSecAttrAccessControl` object by its protection (`kSecAttrAccessible`) and
    /// its flags (`kcAttrAccessControlFlags`, left out when there are none, except in an
    /// update, where 0 takes the flags away), as KeychainCore stores them.
    /// - Throws: errSecParam when the value is not a SecAccessControl, or when
    ///   kSecAttrAccessible or kcAttrAccessControlFlags is given as well and differs (Apple:
    ///   "conflicting kSecAccess and kSecAccessControl attributes"); errSecUnimplemented
    ///   for `.privateKeyUsage` and `.applicationPassword` in an add or an update.
    private static func accessControl(in dictionary: inout [String: Any], for use: Use) throws {
        guard let raw = dictionary.removeValue(forKey: kSecAttrAccessControl) else { return }
        guard let access = raw as? SecAccessControl else {
            throw KeychainError(errSecParam, "kSecAttrAccessControl must be a SecAccessControl (from SecAccessControlCreateWithFlags)")
        }
        if let given = dictionary[kSecAttrAccessible], given as? String != access.protection {
            throw KeychainError(errSecParam, "conflicting kSecAttrAccessible and kSecAttrAccessControl attributes")
        }
        if let given = dictionary[kcAttrAccessControlFlags], given as? Int != Int(access.flags.rawValue) {
            throw KeychainError(errSecParam, "conflicting kcAttrAccessControlFlags and kSecAttrAccessControl attributes")
        }
        if use == .add || use == .changes, !access.flags.isDisjoint(with: .unsupported) {
            throw KeychainError(
                errSecUnimplemented,
                access.flags.contains(.applicationPassword)
                    ? "kSecAccessControlApplicationPassword is not supported by kc (it needs an LAContext, which Linux does not have)"
                    : "kSecAccessControlPrivateKeyUsage is not supported by kc (it guards Secure Enclave keys)")
        }
        dictionary[kSecAttrAccessible] = access.protection
        if !access.flags.isEmpty || use == .changes {
            dictionary[kcAttrAccessControlFlags] = Int(access.flags.rawValue)
        }
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

    /// The value inside any level of Optional and AnyHashable (`[String: AnyHashable]`
    /// queries), or nil.
    private static func unwrap(_ value: Any) -> Any? {
        if type(of: value) == AnyHashable.self, let hashable = value as? AnyHashable {
            return unwrap(hashable.base)
        }
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

    /// One item's attributes as Apple gives them: booleans as numbers 0 and 1, and the
    /// protection class with kc's access-control flags as a `kSecAttrAccessControl` object
    /// (Apple returns `accc` beside `pdmn`).
    private static func attributes(_ item: [String: Any]) -> [String: Any] {
        var out = item.mapValues { value -> Any in
            if let flag = value as? Bool, type(of: value) == Bool.self { return NSNumber(value: flag ? 1 : 0) }
            return value
        }
        let flags = out.removeValue(forKey: kcAttrAccessControlFlags).flatMap { $0 as? Int } ?? 0
        if let protection = out[kSecAttrAccessible] as? String {
            out[kSecAttrAccessControl] = SecAccessControl(
                protection: protection,
                flags: SecAccessControlCreateFlags(rawValue: CFOptionFlags(truncatingIfNeeded: flags)))
        }
        return out
    }
}
#endif
