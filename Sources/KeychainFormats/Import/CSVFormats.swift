import KeychainCore

/// How each CSV export maps onto a `Login`: which header names feed which field
/// (`docs/import-export.md` lists them). Columns a format has that kc keeps nowhere are
/// reported per entry when they hold a value; header names are matched ignoring case.
package enum CSVFormats {
    package typealias Setter = (inout Login, String) -> Void

    /// (header names, what to do with the value) of a format.
    package static func columns(_ format: ImportFormat) -> [([String], Setter)] {
        let title: Setter = { $0.title = $1 }
        let url: Setter = { $0.url = $1 }
        let username: Setter = { $0.username = $1 }
        let password: Setter = { $0.password = $1 }
        let notes: Setter = { $0.notes = $1 }
        let totp: Setter = { $0.totp = $1 }
        switch format {
        case .bitwardenCSV:
            return [
                (["folder"], { $0.folder = $1 }), (["favorite"], flag("favorite")),
                (["type"], { login, type in if type == "note" { login.kind = "secure note" } }),
                (["name"], title), (["notes"], notes),
                (
                    ["fields"],
                    { login, text in
                        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                            let parts = line.split(separator: ":", maxSplits: 1)
                            login.fields.append((String(parts[0]).trimmingSpaces, parts.count > 1 ? String(parts[1]).trimmingSpaces : ""))
                        }
                    }
                ),
                (["reprompt"], flag("reprompt")),
                (
                    ["login_uri"],
                    { login, text in
                        let uris = text.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
                        login.url = uris.first ?? ""
                        login.extraURLs = Array(uris.dropFirst())
                    }
                ),
                (["login_username"], username), (["login_password"], password), (["login_totp"], totp)
            ]
        case .onePasswordCSV:
            return [
                (["title"], title), (["url"], url), (["username"], username), (["password"], password),
                (["otpauth"], totp), (["favorite"], flag("favorite")), (["archived"], flag("archived")),
                (["tags"], { $0.folder = $1 }), (["notes"], notes)
            ]
        case .keepassxcCSV:
            return [
                (["group"], { $0.folder = $1 }), (["title"], title), (["username"], username), (["password"], password),
                (["url"], url), (["notes"], notes), (["totp"], totp),
                (["icon"], { login, icon in if !icon.isEmpty && icon != "0" { login.dropped.append("Icon") } }),
                (["last modified"], { $0.modified = ImportDates.iso8601($1) }),
                (["created"], { $0.created = ImportDates.iso8601($1) })
            ]
        case .chromeCSV:
            return [(["name"], title), (["url"], url), (["username"], username), (["password"], password), (["note"], notes)]
        case .firefoxCSV:
            return [
                (["url"], url), (["username"], username), (["password"], password),
                (["httprealm"], { $0.securityDomain = $1 }),
                (["timecreated"], { $0.created = ImportDates.milliseconds($1) }),
                (["timepasswordchanged"], { $0.modified = ImportDates.milliseconds($1) })
            ]
        case .appleCSV:
            return [
                (["title"], title), (["url"], url), (["username"], username), (["password"], password),
                (["notes"], notes), (["otpauth"], totp)
            ]
        default:
            return []
        }
    }

    /// A yes/no column kc has no place for: reported when set.
    private static func flag(_ name: String) -> Setter {
        { login, value in
            let v = value.trimmingSpaces.lowercased()
            if !v.isEmpty && v != "0" && v != "false" { login.dropped.append(name) }
        }
    }

    /// The entries of a CSV export.
    package static func entries(_ table: CSVTable, format: ImportFormat) -> [ImportEntry] {
        let normal = table.header.map { $0.trimmingSpaces.lowercased() }
        let mapping = columns(format)
        var setters: [Setter?] = Array(repeating: nil, count: normal.count)
        for (names, setter) in mapping {
            if let i = normal.firstIndex(where: { names.contains($0) }) { setters[i] = setter }
        }
        return table.records.map { record in
            let source = "line \(record.line)"
            if let problem = record.problem { return .failed(source, .malformed(problem)) }
            var login = Login(source: source)
            for (i, value) in record.fields.enumerated() {
                if let set = setters[i] {
                    set(&login, value)
                } else if !value.isEmpty {
                    login.dropped.append(table.header[i].trimmingSpaces)
                }
            }
            if login.kind == "secure note" {   // Bitwarden notes: the text is the secret, as Apple's secure notes
                login.password = login.notes
                login.notes = ""
            }
            return login.entry()
        }
    }
}
