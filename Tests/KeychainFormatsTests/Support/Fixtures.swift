import Foundation
import KeychainCore
import KeychainFormats

/// The fixture files under Tests/KeychainFormatsTests/Fixtures (README.md there lists them).
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    /// The bytes of a fixture.
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }

    /// A fixture as UTF-8 text.
    static func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }

    /// A fixture read as a CSV table.
    static func table(_ name: String) throws -> CSVTable {
        try bytes(name).withUnsafeBytes { try CSVTable($0) }
    }

    /// The entries of a CSV fixture in the format its header says.
    static func csvEntries(_ name: String) throws -> (ImportFormat?, [ImportEntry]) {
        let table = try table(name)
        let format = ImportFormat.detectCSV(table.header)
        return (format, format.map { CSVFormats.entries(table, format: $0) } ?? [])
    }

    /// A fixture read as kc's export.
    static func kcExport(_ name: String) throws -> KCExportDocument {
        try bytes(name).withUnsafeBytes { try KCExportDocument.decode($0) }
    }

    /// A fixture parsed as JSON for the Bitwarden importer.
    static func json(_ name: String) throws -> JSONValue {
        try bytes(name).withUnsafeBytes { try JSONValue.parse($0) }
    }
}

/// The error `body` throws, as a KeychainError; nil when it throws nothing.
func keychainError(_ body: () throws -> Void) -> KeychainError? {
    do {
        try body()
        return nil
    } catch let error as KeychainError {
        return error
    } catch {
        return KeychainError(errSecInternalError, "not a KeychainError: \(error)")
    }
}

/// Seconds since 1970 of an ISO 8601 UTC date, worked out apart from the code under test.
func epoch(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Double {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
    return date.timeIntervalSince1970
}

extension ImportEntry {
    /// Why the entry is malformed, nil when it is not.
    var malformed: String? {
        if case .malformed(let why)? = problem { return why }
        return nil
    }

    /// Why the entry is unsupported, nil when it is not.
    var unsupported: String? {
        if case .unsupported(let why)? = problem { return why }
        return nil
    }
}

extension ImportItem {
    /// A text attribute of the query.
    subscript(_ key: String) -> String? { query[key] as? String }

    /// A number attribute of the query.
    func int(_ key: String) -> Int? { query[key] as? Int }

    /// The secret as text.
    var secret: String? { (query[kSecValueData] as? Data).map { String(decoding: $0, as: UTF8.self) } }

    /// The class of the item.
    var itemClass: String? { query[kSecClass] as? String }
}
