import Foundation
import Testing
import KeychainCore
import KeychainFormats

/// Each CSV export kc reads, from its fixture to the keychain items it becomes
/// (docs/import-export.md, "Mapping").
@Suite struct CSVFormatsTests {
    @Test func bitwardenCSV() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/bitwarden.csv")
        #expect(format == .bitwardenCSV)
        #expect(entries.map(\.source) == ["line 2", "line 5", "line 6", "line 7"], "a quoted field spans lines 2 to 4")
        #expect(entries.allSatisfy { $0.problem == nil })

        let forge = entries[0]
        #expect(forge.name == "Forge" && forge.dropped == ["favorite", "reprompt"])
        #expect(forge.items.count == 2)
        let login = forge.items[0]
        #expect(login.itemClass == kSecClassInternetPassword && login[kSecAttrServer] == "forge.example.com")
        #expect(login[kSecAttrProtocol] == "htps" && login[kSecAttrPath] == "/session" && login[kSecAttrAuthenticationType] == "dflt")
        #expect(login[kSecAttrLabel] == "Forge" && login[kSecAttrAccount] == "ada" && login[kSecAttrDescription] == "Dev")
        #expect(login.secret == "pa,ss\"word")
        #expect(login[kSecAttrComment] == "first line, with comma\nsecond \"line\"\nurl: https://mirror.example.com\nteam: core\nregion: eu")
        let otp = forge.items[1]
        #expect(otp.itemClass == kSecClassGenericPassword && otp[kSecAttrService] == "otpauth/forge.example.com")
        #expect(otp[kSecAttrAccount] == "ada" && otp[kSecAttrLabel] == "Forge (one-time codes)" && otp[kSecAttrDescription] == "otpauth")
        #expect(otp.secret == "otpauth://totp/Forge?secret=JBSWY3DPEHPK3PXP", "a bare seed becomes a URI")

        let note = try #require(entries[1].items.first)
        #expect(entries[1].items.count == 1)
        #expect(note.itemClass == kSecClassGenericPassword && note[kSecAttrService] == "Locker code")
        #expect(note[kSecAttrDescription] == "secure note" && note.secret == "4 8 15 16" && note[kSecAttrComment] == nil)

        let nas = try #require(entries[2].items.first)
        #expect(nas[kSecAttrServer] == "10.0.0.2" && nas[kSecAttrProtocol] == "http" && nas.int(kSecAttrPort) == 5000)
        #expect(nas.query[kSecAttrPath] == nil, "a path of / is no path")

        let app = try #require(entries[3].items.first)
        #expect(app.itemClass == kSecClassGenericPassword && app[kSecAttrService] == "Plain app" && app[kSecAttrAccount] == "grace")
        #expect(app[kSecAttrComment] == "url: androidapp://com.example.app" && app[kSecAttrDescription] == "Home")
    }

    @Test func onePasswordCSV() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/1password.csv")
        #expect(format == .onePasswordCSV)
        #expect(entries.map(\.source) == ["line 2", "line 4"])
        let shop = entries[0]
        #expect(shop.dropped == ["archived"], "Favorite is false: nothing to report")
        let login = shop.items[0]
        #expect(login[kSecAttrServer] == "shop.example.com" && login.int(kSecAttrPort) == 8443)
        #expect(login[kSecAttrPath] == "/login?next=%2Fcart" && login[kSecAttrLabel] == "Shop" && login[kSecAttrDescription] == "personal")
        #expect(login.secret == "s3cret \"x\"" && login[kSecAttrComment] == "two\nlines")
        #expect(shop.items[1].secret == "otpauth://totp/Shop:bea?secret=GEZDGNBVGY3TQOJQ&issuer=Shop", "a URI is kept as it is")
        let box = try #require(entries[1].items.first)
        #expect(entries[1].items.count == 1 && entries[1].dropped.isEmpty)
        #expect(box.itemClass == kSecClassGenericPassword && box[kSecAttrService] == "Server box" && box[kSecAttrAccount] == "root")
        #expect(box.secret == "toor")
    }

    @Test func keepassxcCSVKeepsDates() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/keepassxc.csv")
        #expect(format == .keepassxcCSV)
        let mail = entries[0]
        #expect(mail.dropped == ["Icon"])
        #expect(mail.items.count == 2)
        let login = mail.items[0]
        #expect(login[kSecAttrServer] == "mail.example.org" && login[kSecAttrDescription] == "Root/Web" && login.secret == "cy-pass")
        #expect(login.modified?.timeIntervalSince1970 == epoch(2024, 2, 3, 4, 5, 6))
        #expect(login.created?.timeIntervalSince1970 == epoch(2021, 7, 8, 7, 10, 11), "+02:00 is two hours ahead of UTC")
        #expect(mail.items[1].created == login.created, "the one-time-code item keeps the dates too")
        let shell = try #require(entries[1].items.first)
        #expect(shell[kSecAttrProtocol] == "ssh " && shell.int(kSecAttrPort) == 2200 && shell[kSecAttrServer] == "jump.example.org")
        #expect(shell.created == nil && shell.modified == nil && entries[1].dropped.isEmpty)
    }

    @Test func chromeCSV() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/chrome.csv")
        #expect(format == .chromeCSV)
        let bank = try #require(entries[0].items.first)
        #expect(bank[kSecAttrLabel] == "Bank" && bank[kSecAttrPath] == "/login" && bank.secret == "d,e\"e" && bank[kSecAttrAccount] == "dee")
        let nameless = try #require(entries[1].items.first)
        #expect(entries[1].name == "https://nameless.example.net/", "no title: the address names it")
        #expect(nameless[kSecAttrLabel] == "nameless.example.net" && nameless[kSecAttrAccount] == "")
        #expect(nameless[kSecAttrComment] == "a \"note\"" && nameless.secret == "only-pass")
    }

    @Test func firefoxCSV() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/firefox.csv")
        #expect(format == .firefoxCSV)
        #expect(entries[0].dropped == ["formActionOrigin", "guid", "timeLastUsed"])
        #expect(entries[1].dropped == ["guid"], "empty columns are not reported")
        let eve = try #require(entries[0].items.first)
        #expect(eve[kSecAttrServer] == "www.example.com" && eve[kSecAttrLabel] == "www.example.com" && eve.secret == "3ve")
        #expect(eve.created?.timeIntervalSince1970 == 1_700_000_000 && eve.modified?.timeIntervalSince1970 == 1_700_000_100)
        let fay = try #require(entries[1].items.first)
        #expect(fay[kSecAttrSecurityDomain] == "Staff Only" && fay.modified?.timeIntervalSince1970 == 1_600_000_000.123)
    }

    @Test func appleCSV() throws {
        let (format, entries) = try Fixtures.csvEntries("csv/apple.csv")
        #expect(format == .appleCSV)
        let forum = try #require(entries[0].items.first)
        #expect(entries[0].items.count == 1)
        #expect(forum[kSecAttrLabel] == "Forum (gus)" && forum[kSecAttrComment] == "Notes, here" && forum.secret == "g,us")
        #expect(entries[1].items.count == 2)
        #expect(entries[1].items[1][kSecAttrService] == "otpauth/cloud.example.com" && entries[1].items[1][kSecAttrAccount] == "gus@example.com")
    }

    /// A login with nothing to name it by is malformed, whatever the format.
    @Test func anEntryWithoutTitleAddressOrUsernameIsMalformed() throws {
        let table = try Array("name,url,username,password,note\n,,,lonely,\n".utf8).withUnsafeBytes { try CSVTable($0) }
        let entries = CSVFormats.entries(table, format: .chromeCSV)
        #expect(entries.map(\.malformed) == ["the entry has no title, address or username"])
        #expect(entries[0].items.isEmpty)
    }
}
