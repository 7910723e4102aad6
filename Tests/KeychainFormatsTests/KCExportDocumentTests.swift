import Foundation
import Testing
import KeychainCore
import KeychainFormats

/// kc's own export: the one type that `kc export` writes and `kc import` reads.
@Suite struct KCExportDocumentTests {
    /// v1.json is what kc export writes for its items: reading and writing it again gives
    /// the same bytes.
    @Test func readThenWriteGivesTheSameBytes() throws {
        let text = try Fixtures.text("kc-export/v1.json")
        let document = try Fixtures.kcExport("kc-export/v1.json")
        #expect(document.json == text)
        #expect(document.exported?.timeIntervalSince1970 == epoch(2024, 2, 1, 0, 0, 0))
    }

    @Test func valuesKeepTheirTypes() throws {
        let items = try Fixtures.kcExport("kc-export/v1.json").items.map { try $0.get() }
        #expect(items.map(\.className) == ["generic", "internet", "certificate", "key"])
        let generic = items[0]
        #expect(generic.attributes[kSecAttrGeneric] == .data(Data([0, 1, 2, 0xFF])))
        #expect(generic.attributes[kSecAttrComment] == .string("line1\nline2 \"q\""))
        #expect(generic.attributes[kSecAttrSynchronizable] == .bool(false))
        #expect(generic.attributes[kSecAttrCreationDate] == .date(Date(timeIntervalSince1970: epoch(2024, 1, 15, 10, 20, 30))))
        #expect(generic.data == Data("s3cret".utf8))
        #expect(items[1].attributes[kSecAttrPort] == .int(8443))
        #expect(items[2].attributes[kSecAttrCertificateType] == .int(1), "1 is a number, not true")
        #expect(items[3].attributes[kSecAttrCanSign] == .bool(true) && items[3].attributes[kSecAttrKeyClass] == .string("2"))
    }

    @Test func itemsBecomeImportEntries() throws {
        let entries = try Fixtures.kcExport("kc-export/v1.json").entries
        #expect(entries.map(\.source) == ["item 1", "item 2", "item 3", "item 4"])
        #expect(entries.map(\.name) == ["db", "example.com", "cert", "k"])
        let generic = entries[0].items[0]
        #expect(generic.itemClass == kSecClassGenericPassword && generic[kSecAttrService] == "db" && generic.secret == "s3cret")
        #expect(generic.query[kSecAttrGeneric] as? Data == Data([0, 1, 2, 0xFF]))
        #expect(generic.query[kSecAttrCreationDate] == nil && generic.query[kSecAttrModificationDate] == nil, "dates go apart")
        #expect(generic.created?.timeIntervalSince1970 == epoch(2024, 1, 15, 10, 20, 30))
        #expect(generic.modified?.timeIntervalSince1970 == epoch(2024, 1, 16, 11, 21, 31))
        #expect(generic.query[kSecAttrSynchronizable] as? Bool == false)
        #expect(entries[1].items[0].itemClass == kSecClassInternetPassword && entries[1].items[0].int(kSecAttrPort) == 8443)
        #expect(entries[2].items[0].itemClass == kSecClassCertificate && entries[3].items[0].itemClass == kSecClassKey)
    }

    /// What the keychain returns → the document's bytes → read back: the same document
    /// (dates to the second), so export → import → export is stable.
    @Test func fromKeychainAttributesAndBack() throws {
        let created = Date(timeIntervalSince1970: 1_700_000_000.75)
        let item = KCExportItem(
            className: "internet",
            attributes: [
                kSecAttrServer: "example.org", kSecAttrAccount: "\u{1B}[2J\u{9B}me", kSecAttrPort: 1, kSecAttrCreationDate: created,
                kSecAttrIsInvisible: true, kSecAttrGeneric: Data("text-looking bytes".utf8)
            ], data: Data([0xFF, 0x00]))
        let written = KCExportDocument(exported: created, items: [item]).json
        #expect(written.hasPrefix("{\"format\":\"kc-export\",\"version\":1,\"exported\":\"2023-11-14T22:13:20Z\",\"items\":[{\"class\":\"internet\""))
        #expect(written.contains("\"generic\":{\"base64\":\"dGV4dC1sb29raW5nIGJ5dGVz\"}"), "bytes stay bytes even when they are UTF-8")
        #expect(written.contains("\"account\":\"\\u001b[2J\\u009bme\""), "control characters are escaped, C1 too")
        let read = try Array(written.utf8).withUnsafeBytes { try KCExportDocument.decode($0) }
        let back = try read.items[0].get()
        #expect(back.attributes[kSecAttrCreationDate] == .date(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(back.attributes[kSecAttrPort] == .int(1) && back.attributes[kSecAttrIsInvisible] == .bool(true))
        #expect(back.attributes[kSecAttrAccount] == .string("\u{1B}[2J\u{9B}me") && back.data == Data([0xFF, 0x00]))
        #expect(read.json == written)
    }

    /// Format 3's Secret Service map and content type: written as an object of strings in
    /// byte order (a pair named "base64" is a pair, not bytes), read back as the same map,
    /// and handed to the keychain as `[String: String]`.
    @Test func aSecretServiceMapRoundTrips() throws {
        let pairs = ["xdg:schema": "org.git.Password", "base64": "not bytes", "Ünïcode": "välue \"q\"\n", "": ""]
        let item = KCExportItem(
            className: "generic",
            attributes: [
                kSecAttrService: "git", kcAttrSecretServiceAttributes: pairs as [String: Any], kcAttrContentType: "text/plain"
            ], data: Data("t".utf8))
        let written = KCExportDocument(exported: Date(timeIntervalSince1970: 0), items: [item]).json
        #expect(
            written.contains(#""secret-service-attributes":{"":"","base64":"not bytes","xdg:schema":"org.git.Password","Ünïcode":"välue \"q\"\n"}"#),
            "\(written)")
        #expect(written.contains(#""content-type":"text/plain""#))
        let read = try Array(written.utf8).withUnsafeBytes { try KCExportDocument.decode($0) }
        let back = try read.items[0].get()
        #expect(back.attributes[kcAttrSecretServiceAttributes] == .map(pairs))
        #expect(back.attributes[kcAttrContentType] == .string("text/plain"))
        #expect(read.json == written)
        let query = read.entries[0].items[0].query
        #expect(query[kcAttrSecretServiceAttributes] as? [String: String] == pairs)
        // A map whose values are not all strings is named.
        let bad = try Array(#"{"version":1,"items":[{"class":"generic","attributes":{"secret-service-attributes":{"a":1}}}]}"#.utf8)
            .withUnsafeBytes { try KCExportDocument.decode($0) }
        #expect(keychainError { _ = try bad.items[0].get() }?.message == "\"secret-service-attributes\" must be a JSON object of strings")
    }

    @Test func malformedItemsAreNamedOneByOne() throws {
        let document = try Fixtures.kcExport("kc-export/malformed-items.json")
        let problems = document.items.map { element -> String? in
            if case .failure(let error) = element { return error.message }
            return nil
        }
        #expect(
            problems == [
                nil,
                "\"class\" must be generic, internet, certificate or key",
                "\"class\" must be generic, internet, certificate or key",
                "an item is not a JSON object",
                "unknown attribute \"colour\"",
                "\"created\" is not an ISO 8601 date",
                "\"generic\" is an object without valid \"base64\"",
                "\"generic\" is an object without valid \"base64\"",
                "\"port\" has a value of the wrong type",
                "\"label\" has a value of the wrong type",
                "\"label\" has a value of the wrong type",
                "\"data\" is not valid base64",
                "\"attributes\" is not a JSON object"
            ])
        let entries = document.entries
        #expect(entries[0].problem == nil && entries[0].items.first?.secret == "ok")
        #expect(entries[4].source == "item 5" && entries[4].malformed == "unknown attribute \"colour\"" && entries[4].items.isEmpty)
    }

    @Test func documentErrors() throws {
        var error = keychainError { _ = try Fixtures.kcExport("kc-export/version-2.json") }
        #expect(error?.status == errSecWrongSecVersion && error?.message == "this kc export has version 2; this kc reads version 1")
        error = keychainError { _ = try Fixtures.kcExport("kc-export/no-version.json") }
        #expect(error?.status == errSecParam && error?.message == "a kc export has a \"version\"; this one has none")
        error = keychainError { _ = try Fixtures.kcExport("kc-export/no-items.json") }
        #expect(error?.status == errSecParam && error?.message == "a kc export has an \"items\" list; this one has none")
        error = keychainError { _ = try Fixtures.kcExport("kc-export/not-json.json") }
        #expect(error?.status == errSecParam && error?.message.hasPrefix("the input is not valid JSON") == true)
        // Without "format" (kc import --format json): read all the same.
        let bare = try Array("{\"version\":1,\"items\":[]}".utf8).withUnsafeBytes { try KCExportDocument.decode($0) }
        #expect(bare.items.isEmpty && bare.exported == nil)
    }
}
