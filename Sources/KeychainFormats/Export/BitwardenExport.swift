import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc export --format bitwarden-json|csv`: generic and internet passwords as Bitwarden's
/// unencrypted export, which most password managers import (`docs/import-export.md`).
/// - An internet password is a login whose URI is rebuilt from protocol, server, port and
///   path; a generic password a login named after its service, without a URI.
/// - The comment becomes the notes, the kind the folder.
/// - A `secure note` item becomes a secure note; an `otpauth/…` item becomes the `totp` of
///   the login it belongs to (same server or service, same account), or a login of its own.
/// - Certificates, keys and secrets that are not UTF-8 text have no place: they are left
///   out and counted in `leftOut`.
package struct BitwardenExport {
    package struct Login {
        var name = "", notes = "", folder = "", uri = "", username = "", password = "", totp = ""
        var secureNote = false
        var created: Date?, modified: Date?
        /// (server or service, account): what an otpauth item attaches to.
        var key = ""
    }

    package var logins: [Login] = []
    package var leftOut: [String] = []

    package init(items: [(className: String, attributes: [String: Any], data: Data?)]) {
        var otp: [(key: String, name: String, account: String, uri: String, created: Date?, modified: Date?)] = []
        for (className, a, data) in items {
            let label = a[kSecAttrLabel] as? String ?? ""
            guard className == "generic" || className == "internet" else {
                leftOut.append("\(className) \(label)")
                continue
            }
            guard let secret = String(validating: Array(data ?? Data()), as: UTF8.self) else {
                leftOut.append("\(className) \(label) (a secret that is not text)")
                continue
            }
            let account = a[kSecAttrAccount] as? String ?? ""
            var login = Login()
            login.username = account
            login.notes = a[kSecAttrComment] as? String ?? ""
            login.folder = a[kSecAttrDescription] as? String ?? ""
            login.created = a[kSecAttrCreationDate] as? Date
            login.modified = a[kSecAttrModificationDate] as? Date
            if className == "internet" {
                let server = a[kSecAttrServer] as? String ?? ""
                login.uri = WebAddress.url(ofInternetPassword: a)
                login.name = label.isEmpty ? server : label
                login.key = server + "\u{0}" + account
            } else {
                let service = a[kSecAttrService] as? String ?? ""
                if login.folder == "otpauth" && service.hasPrefix("otpauth/") {
                    otp.append((String(service.dropFirst(8)) + "\u{0}" + account, label, account, secret, login.created, login.modified))
                    continue
                }
                login.name = service
                login.key = service + "\u{0}" + account
                if login.folder == "secure note" {
                    login.secureNote = true
                    login.folder = ""
                    login.notes = secret
                    logins.append(login)
                    continue
                }
            }
            login.password = secret
            logins.append(login)
        }
        for code in otp {
            if let i = logins.firstIndex(where: { $0.key == code.key && !$0.secureNote && $0.totp.isEmpty }) {
                logins[i].totp = code.uri
            } else {
                var login = Login()
                login.name = code.name
                login.username = code.account
                login.totp = code.uri
                login.created = code.created
                login.modified = code.modified
                logins.append(login)
            }
        }
    }

    /// Bitwarden's JSON export: `{"encrypted": false, "folders": […], "items": […]}`.
    package func json() -> String {
        var folderIDs: [String: String] = [:]
        var folders: [String] = []
        for login in logins where !login.folder.isEmpty && folderIDs[login.folder] == nil {
            let id = UUID().uuidString.lowercased()
            folderIDs[login.folder] = id
            folders.append(JSON.object([("id", JSON.string(id)), ("name", JSON.string(login.folder))]))
        }
        let null = "null"
        let items = logins.map { login -> String in
            var fields: [(String, String)] = [
                ("id", JSON.string(UUID().uuidString.lowercased())), ("organizationId", null),
                ("folderId", folderIDs[login.folder].map(JSON.string) ?? null),
                ("type", login.secureNote ? "2" : "1"), ("reprompt", "0"), ("name", JSON.string(login.name)),
                ("notes", login.notes.isEmpty ? null : JSON.string(login.notes)), ("favorite", "false")
            ]
            if login.secureNote {
                fields.append(("secureNote", "{\"type\":0}"))
            } else {
                let uris = login.uri.isEmpty ? "[]" : JSON.array([JSON.object([("match", null), ("uri", JSON.string(login.uri))])])
                fields.append(
                    (
                        "login",
                        JSON.object([
                            ("uris", uris), ("username", JSON.string(login.username)),
                            ("password", JSON.string(login.password)),
                            ("totp", login.totp.isEmpty ? null : JSON.string(login.totp))
                        ])
                    ))
            }
            fields.append(("collectionIds", null))
            if let created = login.created { fields.append(("creationDate", JSON.string(ISO8601.string(created)))) }
            if let modified = login.modified { fields.append(("revisionDate", JSON.string(ISO8601.string(modified)))) }
            return JSON.object(fields)
        }
        return JSON.object([("encrypted", "false"), ("folders", JSON.array(folders)), ("items", JSON.array(items))]) + "\n"
    }

    /// Bitwarden's CSV export (the header kc's importer reads as bitwarden-csv).
    package func csv() -> String {
        var out = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        for login in logins {
            let row = [
                login.folder, "", login.secureNote ? "note" : "login", login.name, login.notes, "", "0",
                login.uri, login.username, login.password, login.totp
            ]
            out += row.map(Self.csvField).joined(separator: ",") + "\n"
        }
        return out
    }

    /// A CSV field, quoted when it holds a comma, quote, line end or edge space (RFC 4180).
    /// Values are never altered: a password starting with `=` stays as it is.
    package static func csvField(_ s: String) -> String {
        let needsQuotes =
            s.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            || s.first == " " || s.last == " "
        guard needsQuotes else { return s }
        return "\"" + s.replacing("\"", with: "\"\"") + "\""
    }
}
