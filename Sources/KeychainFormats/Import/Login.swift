import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// A login as password managers export it, before it becomes keychain items
/// (`docs/import-export.md`, "Mapping"):
/// - with a web address whose scheme Apple has a protocol for: an internet password
///   (server, protocol, port, path from the address; account = username);
/// - otherwise a generic password (service = title; account = username);
/// - notes go to the comment, then extra addresses and plain custom fields as `name: value`
///   lines; the folder or group to the kind (kSecAttrDescription);
/// - a one-time-code seed becomes a second generic password whose secret is its
///   `otpauth://` URI: service `otpauth/<server or title>`, the same account.
package struct Login {
    package var source: String
    package var title = ""
    package var url = ""
    package var username = ""
    package var password = ""
    package var notes = ""
    package var totp = ""
    package var folder = ""
    package var securityDomain = ""
    package var extraURLs: [String] = []
    /// Custom fields kept as `name: value` lines in the comment.
    package var fields: [(String, String)] = []
    /// Fields with a value that nothing keeps.
    package var dropped: [String] = []
    package var created: Date?
    package var modified: Date?
    /// Overrides the kind (e.g. "secure note").
    package var kind: String?

    package init(source: String) { self.source = source }

    /// The keychain items of this login.
    package func entry() -> ImportEntry {
        var entry = ImportEntry(source: source, name: title.isEmpty ? url : title, dropped: dropped)
        var query: [String: Any] = [:]
        var commentLines: [String] = []
        if !notes.isEmpty { commentLines.append(notes) }
        var otpService: String
        if !url.isEmpty, let address = WebAddress(url), let code = address.protocolCode {
            query[kSecClass] = kSecClassInternetPassword
            query[kSecAttrServer] = address.host
            query[kSecAttrProtocol] = code
            query[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault   // as kc add and git's helper
            if let port = address.port { query[kSecAttrPort] = port }
            if !address.path.isEmpty { query[kSecAttrPath] = address.path }
            if !securityDomain.isEmpty { query[kSecAttrSecurityDomain] = securityDomain }
            query[kSecAttrLabel] = title.isEmpty ? address.host : title
            otpService = address.host
        } else {
            let url = WebAddress.withoutUserInfo(self.url)   // a password in a URL is not printed
            let service = !title.isEmpty ? title : !url.isEmpty ? url : username
            guard !service.isEmpty else {
                return .failed(source, .malformed("the entry has no title, address or username"))
            }
            query[kSecClass] = kSecClassGenericPassword
            query[kSecAttrService] = service
            query[kSecAttrLabel] = service
            if !url.isEmpty { commentLines.append("url: \(url)") }
            if !securityDomain.isEmpty { commentLines.append("realm: \(securityDomain)") }
            otpService = service
        }
        query[kSecAttrAccount] = username
        for extra in extraURLs where !extra.isEmpty { commentLines.append("url: \(WebAddress.withoutUserInfo(extra))") }
        for (name, value) in fields { commentLines.append("\(name): \(value)") }
        if !commentLines.isEmpty { query[kSecAttrComment] = commentLines.joined(separator: "\n") }
        if let kind = kind ?? (folder.isEmpty ? nil : folder) { query[kSecAttrDescription] = kind }
        query[kSecValueData] = Data(password.utf8)
        entry.items.append(ImportItem(query: query, created: created, modified: modified, source: source))

        if !totp.isEmpty {
            let label = (query[kSecAttrLabel] as? String) ?? otpService
            var uri = totp.trimmingSpaces
            if !uri.contains("://") {
                let seed = uri.filter { $0 != " " }
                uri = "otpauth://totp/\(WebAddress.percentEncoded(label))?secret=\(seed)"
            }
            otpService = "otpauth/" + otpService
            entry.items.append(
                ImportItem(
                    query: [
                        kSecClass: kSecClassGenericPassword, kSecAttrService: otpService, kSecAttrAccount: username,
                        kSecAttrLabel: "\(label) (one-time codes)", kSecAttrDescription: "otpauth", kSecValueData: Data(uri.utf8)
                    ], created: created, modified: modified, source: source))
        }
        return entry
    }
}
