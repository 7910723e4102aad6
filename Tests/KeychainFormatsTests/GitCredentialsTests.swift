import Testing
import KeychainCore
import KeychainFormats

/// git's credential store file: one URL with user and password a line.
@Suite struct GitCredentialsTests {
    @Test func linesBecomeInternetPasswordsOrNamedFailures() throws {
        let text = try Fixtures.text("git-credentials/git-credentials")
        #expect(GitCredentials.looksLike(text))
        let entries = GitCredentials.entries(text)
        #expect(
            entries.map(\.source) == ["line 1", "line 2", "line 4", "line 5", "line 6", "line 7", "line 8", "line 9", "line 10"],
            "the blank line 3 is no entry")

        let ivy = try #require(entries[0].items.first)
        #expect(ivy.itemClass == kSecClassInternetPassword && ivy[kSecAttrServer] == "git.example.com")
        #expect(ivy[kSecAttrAccount] == "ivy" && ivy.secret == "p@ss:word", "percent-decoded")
        #expect(ivy[kSecAttrProtocol] == "htps" && ivy[kSecAttrAuthenticationType] == "dflt")
        let jon = try #require(entries[1].items.first)
        #expect(jon.int(kSecAttrPort) == 443 && jon[kSecAttrPath] == "/jon/repo.git" && jon.secret == "tok3n")
        let kim = try #require(entries[2].items.first)
        #expect(kim[kSecAttrProtocol] == "http" && kim.int(kSecAttrPort) == 3000 && kim.secret == "kéy")

        #expect(entries[3].malformed == "not a URL")
        #expect(entries[4].malformed == "no user name and password before the host" && entries[4].name == "noauth.example.com")
        #expect(entries[5].malformed == "no user name and password before the host")
        #expect(entries[6].malformed == "the scheme \"gopher\" has no keychain protocol")
        #expect(entries[7].malformed == "not a URL", "an address without a scheme is not a credential line")
        let nat = try #require(entries[8].items.first)
        #expect(nat[kSecAttrAccount] == "nat" && nat.secret == "crlf-pw", "a CRLF line end is not part of the password")
        // No secret in what the report prints.
        #expect(!entries.map(\.name).joined().contains("tok3n"))
    }

    @Test func looksLike() {
        #expect(GitCredentials.looksLike("\n\nhttps://a:b@host\n"))
        #expect(!GitCredentials.looksLike("name,url,username,password\n"))
        #expect(!GitCredentials.looksLike("https://host/no-user\n"))
        #expect(!GitCredentials.looksLike(""))
    }
}
