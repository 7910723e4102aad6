import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

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

    /// The format of a JSON document: kc's export (`"format": "kc-export"`) or Bitwarden's
    /// (an `"items"` list with `"encrypted"` or `"folders"`); nil for another shape.
    /// Only the top-level keys are looked at, so the document is not built twice.
    /// - Throws: errSecParam when the bytes are not JSON.
    package static func detectJSON(_ bytes: UnsafeRawBufferPointer) throws -> ImportFormat? {
        let shape: JSONShape
        do {
            shape = try JSONDecoder().decode(JSONShape.self, from: Data(bytes))
        } catch let DecodingError.dataCorrupted(context) {
            throw KeychainError(errSecParam, "the input is not valid JSON: \(context.debugDescription)")
        } catch {
            throw KeychainError(errSecParam, "the input is not valid JSON")
        }
        if shape.format == KCExportDocument.formatName { return .json }
        if shape.hasItemList && (shape.hasEncrypted || shape.hasFolders) { return .bitwardenJSON }
        return nil
    }

    /// The top-level keys `detectJSON` decides on.
    private struct JSONShape: Decodable {
        var format: String?
        var hasItemList = false, hasEncrypted = false, hasFolders = false

        private enum Key: String, CodingKey { case format, items, encrypted, folders }

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: Key.self) else { return }
            format = try? container.decode(String.self, forKey: .format)
            hasItemList = (try? container.nestedUnkeyedContainer(forKey: .items)) != nil
            hasEncrypted = container.contains(.encrypted)
            hasFolders = container.contains(.folders)
        }
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
        KeychainError(
            errSecParam, "cannot tell the format of \(what)",
            hint: "give --format: one of \(names)")
    }
}
