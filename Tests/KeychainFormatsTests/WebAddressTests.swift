import Testing
import KeychainCore
import KeychainFormats

/// Addresses split as internet passwords store them, and back.
@Suite struct WebAddressTests {
    @Test func fullAddress() throws {
        let a = try #require(WebAddress("https://user:p%40ss@Example.COM:8443/a/b?q=1#f"))
        #expect(a.scheme == "https" && a.user == "user" && a.password == "p@ss" && a.host == "example.com")
        #expect(a.port == 8443 && a.path == "/a/b?q=1#f" && a.protocolCode == "htps")
        #expect(a.text == "https://example.com:8443/a/b?q=1#f", "no user or password in the text")
    }

    @Test func shapes() throws {
        #expect(WebAddress("example.com/login") == WebAddress(scheme: "https", host: "example.com", path: "/login"))
        #expect(WebAddress("HTTP://[::1]:8080/x") == WebAddress(scheme: "http", host: "[::1]", port: 8080, path: "/x"))
        #expect(WebAddress("ftp://files.example.com/") == WebAddress(scheme: "ftp", host: "files.example.com", path: ""))
        #expect(WebAddress("https://host:") == WebAddress(scheme: "https", host: "host", path: ""))
        #expect(WebAddress("https://a@b@host?x") == WebAddress(scheme: "https", user: "a@b", host: "host", path: "?x"))
        #expect(WebAddress("  https://trimmed.example  ")?.host == "trimmed.example")
        #expect(WebAddress("androidapp://com.example.app")?.protocolCode == nil)
    }

    @Test func rejected() {
        for text in [
            "https://host:0", "https://host:65536", "https://host:abc", "https://", "://host", "/relative/path",
            "nodots", "has space.com", "https://[::1]junk", "https://bad host/"
        ] {
            #expect(WebAddress(text) == nil, "\(text)")
        }
    }

    @Test func percentCoding() {
        #expect(WebAddress.percentDecoded("k%C3%A9y%zz%4") == "kéy%zz%4", "broken escapes stay as they are")
        #expect(WebAddress.percentDecoded("%FF") == nil, "not UTF-8")
        #expect(WebAddress.percentEncoded("a b/é~") == "a%20b%2F%C3%A9~")
    }

    @Test func withoutUserInfo() {
        #expect(WebAddress.withoutUserInfo("myapp://bob:hunter2@host/x@y") == "myapp://host/x@y")
        #expect(WebAddress.withoutUserInfo("no-scheme@host") == "no-scheme@host")
        #expect(WebAddress.withoutUserInfo("https://host/path") == "https://host/path")
    }

    @Test func urlOfAnInternetPassword() {
        #expect(
            WebAddress.url(ofInternetPassword: [
                kSecAttrServer: "example.com", kSecAttrProtocol: "htps", kSecAttrPort: 8443,
                kSecAttrPath: "/x"
            ]) == "https://example.com:8443/x")
        #expect(WebAddress.url(ofInternetPassword: [kSecAttrServer: "h", kSecAttrProtocol: "ftp ", kSecAttrPort: 0]) == "ftp://h")
        #expect(WebAddress.url(ofInternetPassword: [kSecAttrServer: "h", kSecAttrProtocol: "zzzz"]) == "https://h", "an unknown code is https")
    }
}

extension WebAddress {
    /// An expected address, written out.
    init(scheme: String, user: String? = nil, password: String? = nil, host: String, port: Int? = nil, path: String) {
        self = WebAddress("x://x")!
        (self.scheme, self.user, self.password, self.host, self.port, self.path) = (scheme, user, password, host, port, path)
    }
}
