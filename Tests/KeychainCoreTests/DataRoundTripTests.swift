import Foundation
import Testing
@testable import KeychainCore

/// Secrets and attribute values come back byte for byte.
@Suite struct DataRoundTripTests {
    static let binaryValues: [(String, Data)] = [
        ("all 256 byte values", Data((0...255).map { UInt8($0) })),
        ("empty", Data()),
        ("one NUL", Data([0])),
        ("255 bytes (one below a padding block)", Data(repeating: 0xAB, count: 255)),
        ("256 bytes (a full padding block)", Data(repeating: 0xCD, count: 256)),
        ("1 MiB", Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }))
    ]

    @Test(arguments: binaryValues)
    func secretRoundTrips(_ name: String, _ value: Data) throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: name, kSecValueData: value]))
        let back = try t.keychain.copyMatching(genp([kSecAttrService: name, kSecReturnData: true])) as? Data
        #expect(back == value)
        // And after reopening the file in another keychain object.
        let again = try t.reopen().copyMatching(genp([kSecAttrService: name, kSecReturnData: true])) as? Data
        #expect(again == value)
    }

    @Test func emptyDataIsNotNoData() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "empty", kSecValueData: Data()]))
        try t.keychain.add(genp([kSecAttrService: "none"]))
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "empty", kSecReturnData: true])) as? Data == Data())
        #expect(
            try t.keychain.copyMatching(genp([kSecAttrService: "none", kSecReturnData: true])) == nil,
            "an item without data: success and no result, as Apple")
    }

    static let strings = [
        "plain", "with space", " leading and trailing ", "tab\there", "new\nline", "quote\"'`",
        "punctuation !@#$%^&*()[]{};:,.<>/?\\|", "emoji 🔑🗝️", "中文字符", "עברית", "caf\u{E9}", "cafe\u{301}",
        "NUL\u{0}inside", "\u{0}", ""
    ]

    @Test func attributeValuesRoundTripByteForByte() throws {
        let t = try TempKeychain()
        for (i, s) in Self.strings.enumerated() {
            try t.keychain.add(
                genp([
                    kSecAttrService: "u\(i)", kSecAttrAccount: s, kSecAttrLabel: s, kSecAttrComment: s,
                    kSecAttrGeneric: Data(s.utf8)
                ]))
        }
        for (i, s) in Self.strings.enumerated() {
            let attrs = try #require(
                try t.keychain.copyMatching(
                    genp([
                        kSecAttrAccount: s, kSecAttrService: "u\(i)",
                        kSecReturnAttributes: true
                    ])) as? [String: Any])
            #expect((attrs[kSecAttrAccount] as? String).map { Array($0.utf8) } == Array(s.utf8))
            #expect((attrs[kSecAttrLabel] as? String).map { Array($0.utf8) } == Array(s.utf8))
            #expect((attrs[kSecAttrComment] as? String).map { Array($0.utf8) } == Array(s.utf8))
            #expect(attrs[kSecAttrGeneric] as? Data == Data(s.utf8), "data attributes come back as Data")
        }
    }

    @Test func unicodeFormsAreDistinctItems() throws {
        // Swift's String == treats these as equal; Apple's keychain (and kc) compare bytes.
        let t = try TempKeychain()
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        try t.keychain.add(genp([kSecAttrService: nfc, kSecValueData: Data("nfc".utf8)]))
        try t.keychain.add(genp([kSecAttrService: nfd, kSecValueData: Data("nfd".utf8)]))
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: nfc, kSecReturnData: true])) as? Data == Data("nfc".utf8))
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: nfd, kSecReturnData: true])) as? Data == Data("nfd".utf8))
    }

    @Test func nulBytesAreData() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "a\u{0}b", kSecValueData: Data("1".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "a", kSecValueData: Data("2".utf8)]))
        expectStatus(errSecItemNotFound) { _ = try t.keychain.copyMatching(genp([kSecAttrService: "a\u{0}"])) }
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "a\u{0}b", kSecReturnData: true])) as? Data == Data("1".utf8))
    }

    @Test func stringAndDataValuesKeepTheirType() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: Data("bytes".utf8), kSecAttrAccount: "text"]))
        let attrs = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "bytes", kSecReturnAttributes: true])) as? [String: Any])
        #expect(attrs[kSecAttrService] as? Data == Data("bytes".utf8), "a Data value comes back as Data")
        #expect(attrs[kSecAttrAccount] as? String == "text")
    }
}
