// Codable values JSON-encoded into kSecValueData, with an update-then-add upsert, and
// persistent references. Only Foundation and Security.
import Foundation
import Security

struct AuthSession: Codable, Equatable {
    var accessToken: String
    var refreshToken: String
    var expiresAt: Date
    var scopes: [String]
}

enum CodableKeychainError: Error {
    case status(OSStatus)
}

struct CodableKeychain<Value: Codable> {
    let service: String

    private func baseQuery(_ key: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key
        ]
    }

    func set(_ value: Value, forKey key: String) throws {
        let data = try JSONEncoder().encode(value)
        var query = baseQuery(key)
        let attributes = [kSecValueData as String: data]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            query[kSecValueData as String] = data
            status = SecItemAdd(query as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw CodableKeychainError.status(status) }
    }

    func value(forKey key: String) throws -> Value? {
        var query = baseQuery(key)
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw CodableKeychainError.status(status) }
        return try JSONDecoder().decode(Value.self, from: data)
    }

    /// A persistent reference to the stored item.
    func reference(forKey key: String) -> Data? {
        var query = baseQuery(key)
        query[kSecReturnPersistentRef as String] = true
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }

    /// The value an earlier persistent reference points at.
    func value(at reference: Data) throws -> Value? {
        let query: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else { return nil }
        return try JSONDecoder().decode(Value.self, from: data)
    }

    func remove(forKey key: String) {
        _ = SecItemDelete(baseQuery(key) as CFDictionary)
    }
}
