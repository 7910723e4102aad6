// Keychain code as it is written for iOS and macOS apps, unchanged: it imports only
// Foundation and Security. SecurityModuleTests runs it against a real kc keychain.
import Foundation
import Security

enum KeychainManagerError: Error, Equatable {
    case unhandledError(status: OSStatus)
    case unexpectedPasswordData
}

/// A token store: one service, a token per account.
final class KeychainManager {
    let service: String

    init(service: String) {
        self.service = service
    }

    /// Saves the token, replacing an existing one (add, then update on errSecDuplicateItem).
    func save(token: String, account: String) throws {
        let data = Data(token.utf8)
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            kSecValueData as String: data
        ]
        let status = SecItemAdd(query as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let search: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account
            ]
            let attributes: [String: Any] = [kSecValueData as String: data]
            let updateStatus = SecItemUpdate(search as CFDictionary, attributes as CFDictionary)
            guard updateStatus == errSecSuccess else { throw KeychainManagerError.unhandledError(status: updateStatus) }
            return
        }
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
    }

    /// The token for the account, or nil.
    func token(account: String) throws -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecMatchLimit as String: kSecMatchLimitOne,
            kSecReturnAttributes as String: true,
            kSecReturnData as String: true
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status != errSecItemNotFound else { return nil }
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
        guard let existingItem = item as? [String: Any],
            let passwordData = existingItem[kSecValueData as String] as? Data,
            let token = String(data: passwordData, encoding: .utf8)
        else {
            throw KeychainManagerError.unexpectedPasswordData
        }
        return token
    }

    /// Every account that has a token, sorted.
    func accounts() throws -> [String] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: true
        ]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
        guard let items = result as? [[String: Any]] else { throw KeychainManagerError.unexpectedPasswordData }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    /// Deletes the account's token; a missing one is not an error.
    func deleteToken(account: String) throws {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account
        ]
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeychainManagerError.unhandledError(status: status)
        }
    }
}
