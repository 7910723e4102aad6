import Testing
import KeychainCore
import KeychainFormats

/// One pass entry's text as gpg decrypts it → keychain items. The store's folder walk and
/// gpg itself are tested through the binary (kcTests/ImportTests.swift).
@Suite struct PassStoreTests {
    @Test func loginAddressCodeFieldsAndNotes() throws {
        let entry = PassStore.entry(try Fixtures.text("pass/email/shop"), name: "email/shop", source: "email/shop.gpg")
        #expect(entry.source == "email/shop.gpg" && entry.name == "email/shop" && entry.problem == nil)
        #expect(entry.items.count == 2)
        let login = entry.items[0]
        #expect(login.itemClass == kSecClassInternetPassword && login[kSecAttrServer] == "shop.example.com")
        #expect(login[kSecAttrPath] == "/account" && login[kSecAttrLabel] == "email/shop" && login[kSecAttrAccount] == "mallory")
        #expect(login.secret == "hunter2")
        // Notes first (a key with a space, free text, a value that starts with //), then fields.
        #expect(login[kSecAttrComment] == "security question: first pet\nfree text line\nsee: //elsewhere\npin: 1234")
        #expect(entry.items[1][kSecAttrService] == "otpauth/shop.example.com")
        #expect(entry.items[1].secret == "otpauth://totp/Shop:mallory?secret=JBSWY3DPEHPK3PXP")
    }

    @Test func passwordOnly() throws {
        let entry = PassStore.entry(try Fixtures.text("pass/servers/db"), name: "servers/db", source: "servers/db.gpg")
        let item = try #require(entry.items.first)
        #expect(entry.items.count == 1)
        #expect(item.itemClass == kSecClassGenericPassword && item[kSecAttrService] == "servers/db" && item[kSecAttrAccount] == "")
        #expect(item.secret == "db-pass" && item[kSecAttrComment] == nil)
    }

    /// The first line is the password as it is; the first account line wins, later ones are
    /// fields; `website:` is an address too.
    @Test func firstAccountLineWinsAndThePasswordIsNotTrimmed() throws {
        let entry = PassStore.entry(try Fixtures.text("pass/spaced"), name: "spaced", source: "spaced.gpg")
        let item = try #require(entry.items.first)
        #expect(item.secret == "pw with spaces ")
        #expect(item[kSecAttrAccount] == "first" && item[kSecAttrComment] == "email: second@example.com")
        #expect(item.itemClass == kSecClassInternetPassword && item[kSecAttrServer] == "files.example.com" && item[kSecAttrProtocol] == "ftp ")
    }
}
