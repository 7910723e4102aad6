// Older-style keychain code: [CFString: Any] queries, kCFBooleanTrue, an AnyObject result,
// NSDictionary lookups, noErr and SecCopyErrorMessageString. Only Foundation and Security.
import Foundation
import Security

struct Credentials: Equatable {
    var username: String
    var password: String
}

struct CredentialStoreError: Error {
    var status: OSStatus
    var message: String
}

enum CredentialStore {
    /// Stores a website login as an internet password.
    static func add(_ credentials: Credentials, server: String) throws {
        let query: [CFString: Any] = [
            kSecClass: kSecClassInternetPassword,
            kSecAttrServer: server,
            kSecAttrAccount: credentials.username,
            kSecAttrProtocol: kSecAttrProtocolHTTPS,
            kSecAttrPort: 443,
            kSecAttrPath: "/login",
            kSecValueData: credentials.password.data(using: String.Encoding.utf8)!
        ]
        let status = SecItemAdd(query as CFDictionary, nil)
        guard status == noErr else { throw error(status) }
    }

    /// The login stored for a server.
    static func credentials(server: String) throws -> Credentials {
        let query =
            [
                kSecClass: kSecClassInternetPassword,
                kSecAttrServer: server,
                kSecMatchLimit: kSecMatchLimitOne,
                kSecReturnAttributes: kCFBooleanTrue!,
                kSecReturnData: kCFBooleanTrue!
            ] as CFDictionary
        var result: AnyObject?
        let status = SecItemCopyMatching(query, &result)
        guard status == noErr else { throw error(status) }
        guard let dictionary = result as? NSDictionary,
            let username = dictionary[kSecAttrAccount] as? String,
            let passwordData = dictionary[kSecValueData] as? Data,
            let password = String(data: passwordData, encoding: .utf8)
        else {
            throw CredentialStoreError(status: errSecDecode, message: "unexpected result")
        }
        return Credentials(username: username, password: password)
    }

    /// The port stored with a server's login, read as Apple returns it (a number).
    static func port(server: String) -> Int? {
        let query: NSMutableDictionary = [kSecClass: kSecClassInternetPassword, kSecAttrServer: server]
        query[kSecReturnAttributes] = kCFBooleanTrue
        var result: CFTypeRef?
        guard SecItemCopyMatching(query, &result) == errSecSuccess else { return nil }
        return (result as? [String: Any])?[kSecAttrPort as String] as? Int
    }

    static func remove(server: String) -> OSStatus {
        SecItemDelete([kSecClass: kSecClassInternetPassword, kSecAttrServer: server] as CFDictionary)
    }

    private static func error(_ status: OSStatus) -> CredentialStoreError {
        let message = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
        return CredentialStoreError(status: status, message: message)
    }
}
