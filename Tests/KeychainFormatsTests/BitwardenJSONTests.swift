import Foundation
import Testing
import KeychainCore
import KeychainFormats

/// Bitwarden's unencrypted JSON export: logins and notes imported, what has no home
/// reported, cards, identities and SSH keys unsupported, encrypted exports refused.
@Suite struct BitwardenJSONTests {
    @Test func loginsNotesAndWhatIsNotKept() throws {
        let entries = try BitwardenJSON.entries(Fixtures.json("bitwarden-json/export.json"))
        #expect(entries.map(\.source) == (1...8).map { "entry \($0)" })

        let tracker = entries[0]
        #expect(tracker.name == "Tracker" && tracker.problem == nil)
        #expect(tracker.dropped == ["favorite", "reprompt", "passwordHistory", "hidden field api key", "linked field user", "fido2Credentials"])
        let login = tracker.items[0]
        #expect(login[kSecAttrServer] == "tracker.example.com" && login[kSecAttrPath] == "/login" && login[kSecAttrLabel] == "Tracker")
        #expect(login[kSecAttrDescription] == "Dev" && login[kSecAttrAccount] == "ida" && login.secret == "tr@ck")
        #expect(login[kSecAttrComment] == "bug tracker\nurl: https://tracker2.example.com\nteam: core")
        #expect(login.created?.timeIntervalSince1970 == epoch(2022, 3, 4, 5, 6, 7) + 0.89)
        #expect(login.modified?.timeIntervalSince1970 == epoch(2023, 4, 5, 6, 7, 8))
        #expect(tracker.items[1].secret == "otpauth://totp/Tracker?secret=JBSWY3DPEHPK3PXP", "spaces leave a bare seed")
        // A hidden field is a secret: it goes nowhere.
        for item in tracker.items {
            #expect(!item.query.values.contains { ($0 as? String)?.contains("k-123") == true })
        }

        let note = try #require(entries[1].items.first)
        #expect(note.itemClass == kSecClassGenericPassword && note[kSecAttrService] == "Recovery codes")
        #expect(note[kSecAttrDescription] == "secure note" && note.secret == "1111 2222" && note[kSecAttrComment] == nil)

        #expect(entries[2].unsupported == "a Bitwarden card has no keychain class" && entries[2].name == "Debit")
        #expect(entries[3].unsupported == "a Bitwarden identity has no keychain class")
        #expect(entries[4].unsupported == "a Bitwarden SSH key is not imported; add it with kc add --class key")
        #expect(entries[5].unsupported == "an unknown Bitwarden item type")
        #expect(entries[6].malformed == "an item is not a JSON object")
        #expect(entries[2...6].allSatisfy { $0.items.isEmpty })

        let numbers = try #require(entries[7].items.first)
        #expect(numbers[kSecAttrService] == "Numbers" && numbers[kSecAttrAccount] == "7" && numbers.secret == "12345")
        #expect(numbers[kSecAttrComment] == "42", "numbers where text belongs are read as text")
    }

    @Test func encryptedExportIsRefused() throws {
        let error = keychainError { _ = try BitwardenJSON.entries(Fixtures.json("bitwarden-json/encrypted.json")) }
        #expect(error?.status == errSecParam && error?.message == "this Bitwarden export is encrypted")
        #expect(error?.hint?.contains("not \"JSON (Encrypted)\"") == true)
    }

    @Test func noItemsIsAnError() throws {
        let error = keychainError { _ = try BitwardenJSON.entries(Fixtures.json("bitwarden-json/no-items.json")) }
        #expect(error?.status == errSecParam && error?.message == "a Bitwarden JSON export has an \"items\" list; this one has none")
    }

    @Test func notJSONIsAnError() throws {
        let error = keychainError { _ = try Fixtures.json("kc-export/not-json.json") }
        #expect(error?.status == errSecParam && error?.message.hasPrefix("the input is not valid JSON") == true)
    }
}
