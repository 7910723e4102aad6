import KeychainCore

/// The sources `kc import` reads, and how it recognises them when `--format` is not given:
/// a folder is a pass store; JSON by its shape; CSV by its header; `.git-credentials` by
/// its URL lines.
package enum ImportFormat: String, CaseIterable {
    case json
    case bitwardenJSON = "bitwarden-json"
    case bitwardenCSV = "bitwarden-csv"
    case onePasswordCSV = "1password-csv"
    case keepassxcCSV = "keepassxc-csv"
    case chromeCSV = "chrome-csv"
    case firefoxCSV = "firefox-csv"
    case appleCSV = "apple-csv"
    case gitCredentials = "git-credentials"
    case pass

    package static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    package var isCSV: Bool { rawValue.hasSuffix("-csv") }

    /// The format of a JSON document: kc's export or Bitwarden's.
    package static func detectJSON(_ document: JSONValue) -> ImportFormat? {
        if document["format"]?.string == "kc-export" { return .json }
        if document["items"]?.array != nil, document["encrypted"] != nil || document["folders"] != nil { return .bitwardenJSON }
        return nil
    }

    /// The format of a CSV header (names compared ignoring case and spaces).
    package static func detectCSV(_ header: [String]) -> ImportFormat? {
        let names = Set(header.map { $0.trimmingSpaces.lowercased() })
        let has = { (wanted: [String]) in wanted.allSatisfy(names.contains) }
        if has(["login_uri", "login_username", "login_password"]) { return .bitwardenCSV }
        if has(["url", "username", "password"]) && (names.contains("httprealm") || names.contains("formactionorigin")) { return .firefoxCSV }
        if has(["group", "title", "username", "password"]) { return .keepassxcCSV }
        if has(["title", "url", "username", "password"]) {
            if names.contains("archived") || names.contains("tags") || names.contains("favorite") { return .onePasswordCSV }
            return .appleCSV
        }
        if has(["name", "url", "username", "password"]) { return .chromeCSV }
        return nil
    }

    /// The error for a source kc does not recognise.
    package static func unknown(_ what: String) -> KeychainError {
        KeychainError(errSecParam, "cannot tell the format of \(what)",
                      hint: "give --format: one of \(names)")
    }
}
