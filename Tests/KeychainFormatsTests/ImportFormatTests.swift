import Testing
import KeychainCore
import KeychainFormats

/// How kc import tells a format from a CSV header or a JSON document's top-level keys.
@Suite struct ImportFormatTests {
    @Test func csvHeaders() throws {
        let expected: [String: ImportFormat] = [
            "csv/bitwarden.csv": .bitwardenCSV, "csv/1password.csv": .onePasswordCSV, "csv/keepassxc.csv": .keepassxcCSV,
            "csv/chrome.csv": .chromeCSV, "csv/firefox.csv": .firefoxCSV, "csv/apple.csv": .appleCSV
        ]
        for (file, format) in expected {
            #expect(ImportFormat.detectCSV(try Fixtures.table(file).header) == format, "\(file)")
        }
        #expect(ImportFormat.detectCSV(try Fixtures.table("csv/table/unknown-header.csv").header) == nil)
        #expect(ImportFormat.detectCSV([" NAME ", "Url", "USERNAME", "password"]) == .chromeCSV, "case and spaces ignored")
    }

    @Test func jsonDocuments() throws {
        func detect(_ text: String) throws -> ImportFormat? {
            try Array(text.utf8).withUnsafeBytes { try ImportFormat.detectJSON($0) }
        }
        #expect(try detect(Fixtures.text("kc-export/v1.json")) == .json)
        #expect(try detect(Fixtures.text("bitwarden-json/export.json")) == .bitwardenJSON)
        #expect(try detect(Fixtures.text("bitwarden-json/encrypted.json")) == .bitwardenJSON)
        #expect(try detect("{\"items\": []}") == nil, "items alone could be anything")
        #expect(try detect("{\"items\": {}, \"folders\": []}") == nil, "items must be a list")
        #expect(try detect("[1, 2]") == nil)
        let error = keychainError { _ = try detect(Fixtures.text("kc-export/not-json.json")) }
        #expect(error?.status == errSecParam && error?.message.hasPrefix("the input is not valid JSON") == true, "\(String(describing: error))")
    }
}
