// Runs the app's keychain code once: `apple-keychain-app SERVICE ACCOUNT TOKEN` saves the
// token, reads it back, stores and reads a Codable session, and prints what it read.
import Foundation
import Security

let arguments = CommandLine.arguments
// `apple-keychain-app --read SERVICE ACCOUNT PROMPT`: reads one password as Apple code
// does, with kSecUseOperationPrompt (user presence asks with that text).
if arguments.count == 5 && arguments[1] == "--read" {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: arguments[2],
                                kSecAttrAccount as String: arguments[3], kSecReturnData as String: true,
                                kSecUseOperationPrompt as String: arguments[4]]
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    if status == errSecSuccess, let data = result as? Data {
        print("read: \(String(decoding: data, as: UTF8.self))")
        exit(0)
    }
    print("error: \(SecCopyErrorMessageString(status, nil) as String? ?? "\(status)") (\(status))")
    exit(1)
}
guard arguments.count == 4 else {
    print("usage: apple-keychain-app SERVICE ACCOUNT TOKEN")
    exit(2)
}
do {
    let manager = KeychainManager(service: arguments[1])
    try manager.save(token: arguments[3], account: arguments[2])
    print("token: \(try manager.token(account: arguments[2]) ?? "none")")
    let sessions = CodableKeychain<AuthSession>(service: arguments[1] + ".session")
    try sessions.set(AuthSession(accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 0), scopes: ["x"]),
                     forKey: arguments[2])
    print("session scopes: \(try sessions.value(forKey: arguments[2])?.scopes ?? [])")
} catch {
    let status = (error as? KeychainManagerError).flatMap { e -> OSStatus? in
        if case .unhandledError(let s) = e { return s } else { return nil }
    } ?? errSecParam
    print("error: \(SecCopyErrorMessageString(status, nil) as String? ?? "\(status)") (\(status))")
    exit(1)
}
