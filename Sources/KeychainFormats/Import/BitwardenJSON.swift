import KeychainCore

/// Bitwarden's unencrypted JSON export (`bw export --format json`): folders and items.
/// Logins and secure notes are imported; cards, identities and SSH keys have no keychain
/// class and are reported. Hidden custom fields are secrets, and a keychain item has one
/// secret: they are reported, not put in the comment, which `kc find` prints.
package enum BitwardenJSON {
    package static func entries(_ document: JSONValue) throws -> [ImportEntry] {
        if document["encrypted"]?.bool == true {
            throw KeychainError(
                errSecParam, "this Bitwarden export is encrypted",
                hint: "export again as \"JSON\" (not \"JSON (Encrypted)\"), import, then delete the file")
        }
        guard let items = document["items"]?.array else {
            throw KeychainError(errSecParam, "a Bitwarden JSON export has an \"items\" list; this one has none")
        }
        var folders: [String: String] = [:]
        for folder in document["folders"]?.array ?? [] {
            if let id = folder["id"]?.string { folders[id] = folder["name"]?.text ?? "" }
        }
        return items.enumerated().map { index, item in entry(item, source: "entry \(index + 1)", folders: folders) }
    }

    package static func entry(_ item: JSONValue, source: String, folders: [String: String]) -> ImportEntry {
        guard item.object != nil else { return .failed(source, .malformed("an item is not a JSON object")) }
        let name = item["name"]?.text ?? ""
        var login = Login(source: source)
        login.title = name
        login.notes = item["notes"]?.text ?? ""
        if let folderID = item["folderId"]?.string { login.folder = folders[folderID] ?? "" }
        login.created = item["creationDate"]?.string.flatMap(ImportDates.iso8601)
        login.modified = item["revisionDate"]?.string.flatMap(ImportDates.iso8601)
        if item["favorite"]?.bool == true { login.dropped.append("favorite") }
        if let r = item["reprompt"]?.int, r != 0 { login.dropped.append("reprompt") }
        if let history = item["passwordHistory"]?.array, !history.isEmpty { login.dropped.append("passwordHistory") }
        for field in item["fields"]?.array ?? [] {
            let fieldName = field["name"]?.text ?? ""
            switch field["type"]?.int ?? 0 {
            case 1: login.dropped.append("hidden field \(fieldName)")
            case 3: login.dropped.append("linked field \(fieldName)")
            default: login.fields.append((fieldName, field["value"]?.text ?? ""))
            }
        }
        switch item["type"]?.int ?? 0 {
        case 1:
            let l = item["login"]
            let uris = (l?["uris"]?.array ?? []).compactMap { $0["uri"]?.string }.filter { !$0.isEmpty }
            login.url = uris.first ?? ""
            login.extraURLs = Array(uris.dropFirst())
            login.username = l?["username"]?.text ?? ""
            login.password = l?["password"]?.text ?? ""
            login.totp = l?["totp"]?.text ?? ""
            if let fido = l?["fido2Credentials"]?.array, !fido.isEmpty { login.dropped.append("fido2Credentials") }
        case 2:
            login.kind = "secure note"
            login.password = login.notes
            login.notes = ""
        case 3: return .failed(source, name: name, .unsupported("a Bitwarden card has no keychain class"))
        case 4: return .failed(source, name: name, .unsupported("a Bitwarden identity has no keychain class"))
        case 5: return .failed(source, name: name, .unsupported("a Bitwarden SSH key is not imported; add it with kc add --class key"))
        default: return .failed(source, name: name, .unsupported("an unknown Bitwarden item type"))
        }
        return login.entry()
    }
}
