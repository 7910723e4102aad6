import Foundation
import Testing
import KeychainCore
import KeychainFormats

/// `kc export --format bitwarden-json|csv`: keychain items → Bitwarden's unencrypted export,
/// and back through kc's own Bitwarden importers.
@Suite struct BitwardenExportTests {
    static let created = Date(timeIntervalSince1970: 1_700_000_000)

    /// Items as `kc export` collects them from the keychain.
    static var items: [(className: String, attributes: [String: Any], data: Data?)] {
        [
            (
                "internet",
                [
                    kSecAttrLabel: "Forge", kSecAttrServer: "forge.example.com", kSecAttrProtocol: "htps", kSecAttrPort: 8443,
                    kSecAttrPath: "/login", kSecAttrAccount: "ada", kSecAttrComment: "notes, with \"quotes\"",
                    kSecAttrDescription: "Dev", kSecAttrCreationDate: created, kSecAttrModificationDate: created
                ],
                Data("pa,ss".utf8)
            ),
            ("generic", [kSecAttrService: "db", kSecAttrAccount: "app"], Data("s3cret".utf8)),
            (
                "generic",
                [
                    kSecAttrService: "otpauth/forge.example.com", kSecAttrAccount: "ada", kSecAttrDescription: "otpauth",
                    kSecAttrLabel: "Forge (one-time codes)"
                ], Data("otpauth://totp/Forge?secret=JBSWY3DPEHPK3PXP".utf8)
            ),
            ("generic", [kSecAttrService: "Wifi", kSecAttrDescription: "secure note"], Data("line1\nline2".utf8)),
            ("generic", [kSecAttrService: "formula", kSecAttrAccount: " spaced "], Data("=1+1".utf8)),
            (
                "generic",
                [
                    kSecAttrService: "otpauth/lonely", kSecAttrAccount: "zed", kSecAttrDescription: "otpauth",
                    kSecAttrLabel: "Lonely (one-time codes)"
                ], Data("otpauth://totp/L?secret=GEZDGNBVGY3TQOJQ".utf8)
            ),
            ("certificate", [kSecAttrLabel: "cert"], Data([0x30, 0x00])),
            ("generic", [kSecAttrService: "bin", kSecAttrLabel: "bin"], Data([0xFF]))
        ]
    }

    @Test func whatHasNoPlaceIsLeftOutAndNamed() {
        let export = BitwardenExport(items: Self.items)
        #expect(export.leftOut == ["certificate cert", "generic bin (a secret that is not text)"])
        #expect(export.logins.count == 5, "the Forge code joins its login; the lonely one is a login of its own")
    }

    @Test func csvIsExactlyTheFixture() throws {
        #expect(BitwardenExport(items: Self.items).csv() == (try Fixtures.text("bitwarden-export/expected.csv")))
    }

    @Test func csvFieldQuoting() {
        #expect(BitwardenExport.csvField("plain") == "plain")
        #expect(BitwardenExport.csvField("=cmd|' /C calc'!A0") == "=cmd|' /C calc'!A0", "values are never altered")
        #expect(BitwardenExport.csvField("a,b") == "\"a,b\"" && BitwardenExport.csvField("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(BitwardenExport.csvField("cr\rlf") == "\"cr\rlf\"" && BitwardenExport.csvField(" edge") == "\" edge\"")
    }

    @Test func json() throws {
        let text = BitwardenExport(items: Self.items).json()
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["encrypted"] as? Bool == false)
        let folders = try #require(document["folders"] as? [[String: Any]])
        #expect(folders.count == 1 && folders[0]["name"] as? String == "Dev")
        let items = try #require(document["items"] as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == ["Forge", "db", "Wifi", "formula", "Lonely (one-time codes)"])
        #expect(Set(items.compactMap { $0["id"] as? String }).count == 5, "every item has its own id")
        let forge = items[0]
        #expect(forge["type"] as? Int == 1 && forge["folderId"] as? String == folders[0]["id"] as? String)
        #expect(forge["notes"] as? String == "notes, with \"quotes\"" && forge["creationDate"] as? String == "2023-11-14T22:13:20Z")
        let login = try #require(forge["login"] as? [String: Any])
        #expect((login["uris"] as? [[String: Any]])?.first?["uri"] as? String == "https://forge.example.com:8443/login")
        #expect(login["username"] as? String == "ada" && login["password"] as? String == "pa,ss")
        #expect(login["totp"] as? String == "otpauth://totp/Forge?secret=JBSWY3DPEHPK3PXP")
        let note = items[2]
        #expect(note["type"] as? Int == 2 && note["notes"] as? String == "line1\nline2" && note["login"] == nil)
        #expect(items[1]["folderId"] is NSNull && items[1]["notes"] is NSNull)
    }

    /// What kc writes for Bitwarden, kc reads back to the same secrets, comments and kinds.
    @Test func bothExportsReadBack() throws {
        let export = BitwardenExport(items: Self.items)
        let fromCSV = try Array(export.csv().utf8).withUnsafeBytes { try CSVFormats.entries(CSVTable($0), format: .bitwardenCSV) }
        let fromJSON = try Array(export.json().utf8).withUnsafeBytes { try BitwardenJSON.entries(JSONValue.parse($0)) }
        for entries in [fromCSV, fromJSON] {
            #expect(entries.allSatisfy { $0.problem == nil && $0.dropped.isEmpty })
            let forge = entries[0].items
            #expect(forge.count == 2 && forge[0][kSecAttrServer] == "forge.example.com" && forge[0].int(kSecAttrPort) == 8443)
            #expect(forge[0][kSecAttrComment] == "notes, with \"quotes\"" && forge[0][kSecAttrDescription] == "Dev" && forge[0].secret == "pa,ss")
            #expect(forge[1][kSecAttrService] == "otpauth/forge.example.com" && forge[1].secret == "otpauth://totp/Forge?secret=JBSWY3DPEHPK3PXP")
            #expect(entries[2].items[0][kSecAttrDescription] == "secure note" && entries[2].items[0].secret == "line1\nline2")
            #expect(entries[3].items[0][kSecAttrAccount] == " spaced " && entries[3].items[0].secret == "=1+1")
        }
        #expect(fromJSON[0].items[0].created == Self.created, "Bitwarden JSON keeps the dates")
    }
}
