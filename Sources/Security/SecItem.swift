#if os(Linux)
import KeychainCore
import Foundation
import KeychainClient

/// Adds an item to the keychain. Apple's `SecItemAdd`, with its signature.
///
///     let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                                 kSecAttrService as String: "api", kSecAttrAccount as String: "me",
///                                 kSecValueData as String: Data("token".utf8)]
///     let status = SecItemAdd(query as CFDictionary, nil)
///
/// - Returns: errSecSuccess, errSecDuplicateItem, errSecParam…
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    securityCall(result) { try KeychainAccess.shared.perform(.add(QueryBridge.query(attributes, for: .add))).value() }
}

/// Finds items. Apple's `SecItemCopyMatching`, with its signature: `result` receives `Data`
/// (kSecReturnData alone), a dictionary (kSecReturnAttributes, with the data under
/// kSecValueData when asked), an array of either for kSecMatchLimitAll, or a persistent
/// reference as `Data`.
///
///     var item: CFTypeRef?
///     let status = SecItemCopyMatching(query as CFDictionary, &item)
///     let token = item as? Data
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    securityCall(result) { try KeychainAccess.shared.perform(.copyMatching(QueryBridge.query(query, for: .search))).value() }
}

/// Changes every item matching `query` to the values in `attributesToUpdate`. Apple's
/// `SecItemUpdate`, with its signature.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    osStatus {
        _ = try KeychainAccess.shared.perform(.update(QueryBridge.query(query, for: .target), attributes: QueryBridge.query(attributesToUpdate, for: .changes)))
    }
}

/// Deletes every item matching `query`. Apple's `SecItemDelete`, with its signature.
/// - Returns: errSecItemNotFound when nothing matched.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    osStatus { _ = try KeychainAccess.shared.perform(.delete(QueryBridge.query(query, for: .target))) }
}

/// Runs a call that may give a result; `result` is nil unless it succeeds with one.
private func securityCall(_ result: UnsafeMutablePointer<CFTypeRef?>?, _ body: () throws -> Any?) -> OSStatus {
    result?.pointee = nil
    return osStatus {
        if let value = try body(), let result { result.pointee = QueryBridge.result(value) }
    }
}
#endif
