/// A validated query dictionary: the typed form the keychain works with.
package struct ItemQuery {
    var itemClass: ItemClass
    /// Attribute conditions (copy, update, delete) or values (add), by raw key; never `sync`.
    var attributes: [String: AttributeValue] = [:]
    var sync: SyncFilter = .notSynchronizable
    var returnData = false
    var returnAttributes = false
    var returnPersistentRef = false
    var limit: MatchLimit = .one
    var caseInsensitive = false
    /// `kcMatchText` (a kc extension): how text attributes compare.
    var textMatch: TextMatch = .exact
    /// `kSecValueData` (add only; ignored in searches, as Apple does).
    var data: [UInt8]?
    /// The item id of `kSecValuePersistentRef`.
    var persistentItemID: [UInt8]?
    /// `kSecUseAuthenticationUI`: whether items that need user presence may be asked for.
    var authenticationUI: AuthenticationUI = .allow

    /// Largest secret kc stores (errSecDataTooLarge above it).
    static let maxDataBytes = 16 << 20
    /// Largest single attribute value.
    package static let maxAttributeBytes = 64 << 10
    /// Apple refuses a dictionary with more keys than this (errSecParam).
    static let maxKeys = 128

    /// Parses and validates a query dictionary for `operation`.
    /// - Throws: errSecParam (missing class, wrong value type, a key not allowed for the
    ///   operation), errSecNoSuchClass, errSecNoSuchAttr (an attribute the class lacks),
    ///   errSecUnimplemented (access control, item references), errSecDataTooLarge.
    package init(_ dictionary: [String: Any], for operation: Operation) throws {
        guard dictionary.count <= Self.maxKeys else {
            throw KeychainError(errSecParam, "the query has \(dictionary.count) keys, more than \(Self.maxKeys)")
        }
        var persistent: (ItemClass, [UInt8])?
        if let ref = dictionary[kSecValuePersistentRef] {
            guard operation != .add else {
                throw KeychainError(errSecParam, "SecItemAdd does not take kSecValuePersistentRef")
            }
            persistent = try Self.parsePersistentRef(ref)
        }
        let resolvedClass: ItemClass
        if let raw = dictionary[kSecClass] {
            guard let name = raw as? String else {
                throw KeychainError(errSecParam, "kSecClass must be a string such as kSecClassGenericPassword")
            }
            guard let c = ItemClass(rawValue: name) else {
                throw KeychainError(errSecNoSuchClass, "unknown item class \"\(name)\"")
            }
            if let persistent, persistent.0 != c {
                throw KeychainError(errSecParam, "kSecValuePersistentRef names a \(persistent.0.rawValue) item but kSecClass is \(c.rawValue)")
            }
            resolvedClass = c
        } else if let persistent {
            resolvedClass = persistent.0
        } else {
            throw KeychainError(errSecParam, "the query has no kSecClass", hint: "add kSecClass: kSecClassGenericPassword (or another class)")
        }
        itemClass = resolvedClass
        persistentItemID = persistent?.1

        var attributeCount = 0
        var noAuthenticationUI = false
        for (key, value) in dictionary {
            switch key {
            case kSecClass, kSecValuePersistentRef:
                continue
            case kSecValueData:
                guard let bytes = Self.bytes(value) else {
                    throw KeychainError(errSecParam, "kSecValueData must be Data")
                }
                guard bytes.count <= Self.maxDataBytes else {
                    throw KeychainError(errSecDataTooLarge, "the secret is \(bytes.count) bytes; kc stores at most \(Self.maxDataBytes) bytes (16 MiB)")
                }
                if operation == .add { data = bytes }
            case kSecValueRef:
                throw KeychainError(errSecUnimplemented, "kSecValueRef is not supported by kc; pass the item's attributes and kSecValueData")
            case kSecAttrAccessControl:
                throw KeychainError(errSecUnimplemented, "kSecAttrAccessControl is not supported by kc; use kSecAttrAccessible")
            case kSecUseDataProtectionKeychain:
                continue
            case kSecAttrSynchronizable:
                if let s = value as? String, s == kSecAttrSynchronizableAny {
                    sync = .any
                } else if let b = AttributeValue.from(value, kind: .bool), case .int(let v) = b, v == 0 || v == 1 {
                    sync = v == 1 ? .synchronizable : .notSynchronizable
                } else {
                    throw KeychainError(errSecParam, "kSecAttrSynchronizable must be a boolean or kSecAttrSynchronizableAny")
                }
            case kSecUseAuthenticationUI:
                authenticationUI = try AuthenticationUI(value: value, for: operation)
            case kSecUseNoAuthenticationUI:
                guard let b = Self.boolean(value) else { throw KeychainError(errSecParam, "kSecUseNoAuthenticationUI must be a boolean") }
                noAuthenticationUI = b
            case kSecUseOperationPrompt:
                // The prompt is the asking side's (KeychainSession's presence provider).
                guard value is String else { throw KeychainError(errSecParam, "kSecUseOperationPrompt must be a string") }
            default:
                if key.utf8.count == 4 { attributeCount += 1 }
                try parseOther(key: key, value: value, operation: operation)
            }
        }
        if operation == .add, sync == .any { sync = .notSynchronizable }
        if noAuthenticationUI, dictionary[kSecUseAuthenticationUI] == nil { authenticationUI = .fail }
        if operation == .add, sync == .synchronizable, AccessControlFlags(stored: attributes[kcAttrAccessControlFlags]).requiresUserPresence {
            throw KeychainError(errSecParam, "an item with access-control constraints is not synchronizable (Apple refuses it too)")
        }
        if persistentItemID != nil, operation == .copyMatching, attributeCount > 0 || dictionary[kSecAttrSynchronizable] != nil {
            throw KeychainError(errSecParam, "SecItemCopyMatching with kSecValuePersistentRef takes no other attribute")
        }
    }

    private mutating func parseOther(key: String, value: Any, operation: Operation) throws {
        if key.hasPrefix("m_") {
            guard operation == .copyMatching else {
                throw KeychainError(
                    errSecParam, "\(key) (a kSecMatch… key) is not allowed in \(Self.name(operation))",
                    hint: "SecItemUpdate and SecItemDelete act on every match; kSecMatchLimit belongs to SecItemCopyMatching")
            }
            switch key {
            case kSecMatchLimit: limit = try Self.parseLimit(value)
            case kSecMatchCaseInsensitive:
                guard let b = Self.boolean(value) else { throw KeychainError(errSecParam, "kSecMatchCaseInsensitive must be a boolean") }
                caseInsensitive = b
            case kcMatchText: textMatch = try TextMatch(queryValue: value)
            default: break   // other kSecMatch… keys are accepted and ignored, as Apple does
            }
            return
        }
        if key.hasPrefix("r_") {
            guard let b = Self.boolean(value) else { throw KeychainError(errSecParam, "\(key) must be a boolean") }
            switch key {
            case kSecReturnData: returnData = b
            case kSecReturnAttributes: returnAttributes = b
            case kSecReturnPersistentRef: returnPersistentRef = b
            case kSecReturnRef:
                if b {
                    throw KeychainError(errSecUnimplemented, "kSecReturnRef is not supported by kc; ask for kSecReturnAttributes or kSecReturnPersistentRef")
                }
            default: throw KeychainError(errSecParam, "unknown return key \(key)")
            }
            if b, operation == .update {
                throw KeychainError(errSecParam, "SecItemUpdate takes no kSecReturn… key")
            }
            if operation == .delete { returnData = false; returnAttributes = false; returnPersistentRef = false }
            return
        }
        if key.hasPrefix("u_") {
            switch key {
            case "u_CallerName": return
            case kSecUseAuthenticationContext, "u_CredRef":
                throw KeychainError(errSecUnimplemented, "\(key) is not supported by kc")
            default: throw KeychainError(errSecParam, "unknown key \(key)")
            }
        }
        if key.hasPrefix("f") && key.count != 4 { return }
        guard key.utf8.count == 4 else {
            throw KeychainError(errSecParam, "unknown query key \"\(key)\"")
        }
        guard let spec = Schema.attribute(key, in: itemClass) else {
            throw KeychainError(errSecNoSuchAttr, "the attribute \"\(key)\" does not exist for \(itemClass.rawValue) items")
        }
        attributes[key] = try Self.value(value, spec: spec)
    }

    /// A Swift `Bool` only: with Foundation loaded, `1 as? Bool` succeeds by bridging, and
    /// Apple wants a CFBoolean, not a number, for kSecReturn… and kSecMatchCaseInsensitive.
    static func boolean(_ value: Any) -> Bool? {
        guard type(of: value) == Bool.self else { return nil }
        return value as? Bool
    }

    /// Converts and checks one attribute value.
    static func value(_ value: Any, spec: AttributeSpec) throws -> AttributeValue {
        // A map says itself what is wrong with it (its type, its size, which part is too long).
        if spec.kind == .map { return .map(try AttributeMap(parsing: value, key: spec.key)) }
        guard let v = AttributeValue.from(value, kind: spec.kind) else {
            throw KeychainError(errSecParam, "the value of \"\(spec.key)\" has the wrong type (\(type(of: value)))")
        }
        if let bytes = v.comparableBytes, bytes.count > maxAttributeBytes {
            throw KeychainError(errSecDataTooLarge, "the value of \"\(spec.key)\" is \(bytes.count) bytes; at most \(maxAttributeBytes) are allowed")
        }
        if spec.key == kSecAttrAccessible {
            let allowed = ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"]
            guard case .string(let s) = v, allowed.contains(s) else {
                throw KeychainError(errSecParam, "kSecAttrAccessible must be one of \(allowed.joined(separator: ", "))")
            }
        }
        if spec.key == kcAttrAccessControlFlags {
            guard case .int(let raw) = v else { throw KeychainError(errSecParam, "\"\(spec.key)\" must be a number") }
            _ = try AccessControlFlags(validating: raw)
        }
        if spec.kind == .bool, case .int(let n) = v, n != 0 && n != 1 {
            throw KeychainError(errSecParam, "\"\(spec.key)\" must be a boolean")
        }
        return v
    }

    /// Parses `attributesToUpdate` of SecItemUpdate: class attributes and kSecValueData only.
    static func changes(_ dictionary: [String: Any], itemClass: ItemClass) throws -> (attributes: [String: AttributeValue], data: [UInt8]?) {
        var attributes: [String: AttributeValue] = [:]
        var data: [UInt8]?
        for (key, value) in dictionary {
            if key == kSecValueData {
                guard let bytes = Self.bytes(value) else { throw KeychainError(errSecParam, "kSecValueData must be Data") }
                guard bytes.count <= maxDataBytes else {
                    throw KeychainError(errSecDataTooLarge, "the secret is \(bytes.count) bytes; kc stores at most \(maxDataBytes) bytes (16 MiB)")
                }
                data = bytes
                continue
            }
            if key == kSecAttrAccessControl {
                throw KeychainError(errSecUnimplemented, "kSecAttrAccessControl is not supported by kc")
            }
            guard let spec = Schema.attribute(key, in: itemClass) else {
                throw KeychainError(errSecNoSuchAttr, "\"\(key)\" cannot be changed by SecItemUpdate: it is not an attribute of \(itemClass.rawValue) items")
            }
            attributes[key] = try Self.value(value, spec: spec)
        }
        if attributes["sync"] == .int(1), AccessControlFlags(stored: attributes[kcAttrAccessControlFlags]).requiresUserPresence {
            throw KeychainError(errSecParam, "an item with access-control constraints is not synchronizable (Apple refuses it too)")
        }
        return (attributes, data)
    }

    private static func parseLimit(_ value: Any) throws -> MatchLimit {
        if let s = value as? String {
            switch s {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: throw KeychainError(errSecParam, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a number")
            }
        }
        guard let v = AttributeValue.from(value, kind: .number), case .int(let n) = v, !(value is Bool) else {
            throw KeychainError(errSecParam, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a number")
        }
        switch n {
        case 1: return .one
        case -1: return .all
        case 0...: return .count(Int(n))
        default: throw KeychainError(errSecParam, "kSecMatchLimit must not be negative")
        }
    }

    private static func parsePersistentRef(_ value: Any) throws -> (ItemClass, [UInt8]) {
        guard let bytes = Self.bytes(value), bytes.count == 20,
            let c = ItemClass(rawValue: String(decoding: bytes[0..<4], as: UTF8.self))
        else {
            throw KeychainError(errSecParam, "kSecValuePersistentRef is not a kc persistent reference (20 bytes: class and item id)")
        }
        return (c, Array(bytes[4..<20]))
    }

    static func bytes(_ value: Any) -> [UInt8]? {
        if let d = value as? Data { return Array(d) }
        if let a = value as? [UInt8] { return a }
        return nil
    }

    private static func name(_ operation: Operation) -> String {
        switch operation {
        case .add: return "SecItemAdd"
        case .copyMatching: return "SecItemCopyMatching"
        case .update: return "SecItemUpdate"
        case .delete: return "SecItemDelete"
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
