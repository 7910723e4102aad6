import Foundation
import Testing
import KCTestSupport

/// Issue 21: `kc find`'s text output follows the order docs/commands.md documents, prints
/// coded attributes by name (`accessible: when-unlocked`, not `ak`), certificates' issuer
/// and subject as distinguished names, and an RSA key's real size; `--json` keeps the codes.
@Suite struct ItemTextTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").path

    /// The leading attribute names as docs/commands.md ("Text output") lists them: "then
    /// those of service, server, … and modified that the item has".
    static func documentedLeading() throws -> [String] {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/commands.md")
        let text = try String(contentsOf: docs, encoding: .utf8).replacingOccurrences(of: "\n", with: " ")
        let start = try #require(text.range(of: "then those of "))
        let end = try #require(text.range(of: " that the item has", range: start.upperBound..<text.endIndex))
        return text[start.upperBound..<end.lowerBound].replacingOccurrences(of: " and ", with: ", ")
            .components(separatedBy: ", ")
    }

    /// Checks each item of `stdout` (blocks separated by a blank line): `class:` first, the
    /// documented leading names in their order, then the rest alphabetically.
    func expectDocumentedOrder(_ stdout: String, leading: [String], _ what: String) {
        for block in stdout.components(separatedBy: "\n\n") where !block.isEmpty {
            let lines = block.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("class: ") == true, "\(what): class first")
            let names = lines.dropFirst().map { String($0.prefix { $0 != ":" }) }
            let first = names.filter(leading.contains).sorted { leading.firstIndex(of: $0)! < leading.firstIndex(of: $1)! }
            let rest = names.filter { !leading.contains($0) }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(names == first + rest, "\(what): \(names)")
            #expect(!rest.isEmpty && !first.isEmpty, "\(what): both parts are there")
        }
    }

    @Test func findPrintsEveryClassInTheDocumentedOrderWithCodesByName() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        let leading = try Self.documentedLeading()
        #expect(leading.first == "service" && leading.last == "modified" && leading.count == 17, "\(leading)")
        #expect(
            try h.kc(
                [
                    "add", "-s", "github.com", "-a", "alice", "-D", "token", "-j", "work", "-G", "g", "-c", "aapl",
                    "-w", "s3cret-generic"
                ], password: pw
            ).status == 0)
        #expect(
            try h.kc(
                [
                    "add", "--class", "internet", "-s", "example.com", "-a", "bob", "-r", "https", "-P", "443",
                    "-p", "/x", "-d", "CORP", "-t", "digest", "-w", "s3cret-inet"
                ], password: pw
            ).status == 0)
        #expect(try h.kc(["add", "--class", "certificate", "--data-file", Self.vectors + "/cert-v1.der", "-l", "v1"], password: pw).status == 0)
        #expect(try h.kc(["add", "--class", "key", "--tag", "rsa", "--data-file", Self.vectors + "/key-rsa-3072.pem"], password: pw).status == 0)

        var out = try h.kc(["find", "-s", "github.com"], password: pw)
        #expect(out.status == 0)
        expectDocumentedOrder(out.stdout, leading: leading, "generic")
        for line in ["accessible: when-unlocked", "creator: 1633775724 ('aapl')", "kind: token", "access-group: \"\""] {
            #expect(out.stdout.contains("\n\(line)\n"), "\(line) in \(out.stdout)")
        }
        #expect(!out.stdout.contains("s3cret"))

        out = try h.kc(["find", "--class", "internet", "-s", "example.com"], password: pw)
        expectDocumentedOrder(out.stdout, leading: leading, "internet")
        for line in ["protocol: https", "auth-type: digest", "accessible: when-unlocked", "port: 443", "security-domain: CORP"] {
            #expect(out.stdout.contains("\n\(line)\n"), "\(line) in \(out.stdout)")
        }

        out = try h.kc(["find", "--class", "certificate"], password: pw)
        expectDocumentedOrder(out.stdout, leading: leading, "certificate")
        // openssl x509 -noout -subject -issuer -nameopt RFC2253 (with ", " for ",").
        for line in [
            "issuer: CN=kc RSA v3 Test, O=kc Test, C=US", "subject: CN=kc v1 Test", "certificate-type: x509v1",
            "certificate-encoding: der", "accessible: always", "serial-number: 0x07"
        ] {
            #expect(out.stdout.contains("\n\(line)\n"), "\(line) in \(out.stdout)")
        }

        out = try h.kc(["find", "--class", "key"], password: pw)
        expectDocumentedOrder(out.stdout, leading: leading, "key")
        for line in ["key-size: 3072", "effective-key-size: 3072", "key-class: private", "type: rsa"] {
            #expect(out.stdout.contains("\n\(line)\n"), "\(line) in \(out.stdout)")
        }

        // --json keeps the codes and the DER, as scripts expect.
        func attributes(_ arguments: [String]) throws -> [String: Any] {
            let out = try h.kc(arguments + ["--json"], password: pw)
            return try #require((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])?["attributes"] as? [String: Any])
        }
        #expect(try attributes(["find", "-s", "github.com"])["accessible"] as? String == "ak")
        let inet = try attributes(["find", "--class", "internet"])
        #expect(inet["protocol"] as? String == "htps" && inet["auth-type"] as? String == "httd")
        let cert = try attributes(["find", "--class", "certificate"])
        #expect(cert["certificate-type"] as? Int == 1 && cert["certificate-encoding"] as? Int == 3 && cert["accessible"] as? String == "dk")
        // The issuer's DER, as before: a JSON string when its bytes happen to be UTF-8, else {"base64": …}.
        let issuer =
            (cert["issuer"] as? String).map { Data($0.utf8) }
            ?? ((cert["issuer"] as? [String: Any])?["base64"] as? String).flatMap { Data(base64Encoded: $0) }
        #expect(issuer?.first == 0x30 && issuer.map { !String(decoding: $0, as: UTF8.self).contains("CN=") } == true, "the issuer's DER")
        let key = try attributes(["find", "--class", "key"])
        #expect(key["key-size"] as? Int == 3072 && key["key-class"] as? Int == 1 && key["type"] as? Int == 42)
    }

    /// Every RSA and EC encoding a user is likely to have gets its size; an opaque blob keeps 0.
    @Test func keysAddedFromFilesShowTheirSize() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: h.directory + "/opaque.bin"))
        let files: [(String, String, String, String)] = [
            (Self.vectors + "/key-rsa-3072.pem", "private", "rsa", "3072"),
            (Self.vectors + "/key-rsa-3072-pkcs1.der", "private", "rsa", "3072"),
            (Self.vectors + "/key-rsa-3072-spki.der", "public", "rsa", "3072"),
            (Self.vectors + "/key-rsa-3072-pkcs1-public.der", "public", "rsa", "3072"),
            (Self.vectors + "/key-ec-p384-pkcs8.der", "private", "ec", "384"),
            (h.directory + "/opaque.bin", "public", "0", "0")
        ]
        for (i, (file, keyClass, type, size)) in files.enumerated() {
            var out = try h.kc(["add", "--class", "key", "--tag", "k\(i)", "--data-file", file], password: pw)
            #expect(out.status == 0, "\(file): \(out.stderr)")
            out = try h.kc(["find", "--class", "key", "--tag", "k\(i)"], password: pw)
            for line in ["key-size: \(size)", "key-class: \(keyClass)", "type: \(type)"] {
                #expect(out.stdout.contains("\n\(line)\n"), "\(file): \(line) in \(out.stdout)")
            }
        }
    }

    /// A code kc has no name for prints as stored; every accessibility has its Apple name;
    /// a certificate name that is not DER prints as hex, one with control characters escaped.
    @Test func unknownCodesAndCraftedNamesPrintSafely() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        #expect(try h.kc(["add", "--class", "internet", "-s", "odd.example", "-a", "o", "-r", "abcd", "-t", "wxyz", "-w", "x"], password: pw).status == 0)
        var out = try h.kc(["find", "--class", "internet", "-s", "odd.example"], password: pw)
        #expect(out.stdout.contains("\nprotocol: abcd\n") && out.stdout.contains("\nauth-type: wxyz\n"), "\(out.stdout)")

        // A name whose CN holds an escape sequence, and an issuer that is not DER at all.
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag, UInt8(content.count)] + content }
        let evil = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, [0x55, 0x04, 0x03]) + tlv(0x0C, Array("x\u{1B}]0;pwned\u{07}, O=fake".utf8)))))
        func b64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
        var items: [String] = []
        for (n, code) in ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"].enumerated() {
            items.append(#"{"class":"generic","attributes":{"service":"acc\#(n)","account":"a","accessible":"\#(code)"},"data":"eA=="}"#)
        }
        items.append(
            #"{"class":"certificate","attributes":{"label":"evil","issuer":{"base64":"\#(b64(evil))"},"serial-number":{"base64":"AQ=="},"subject":{"base64":"\#(b64([0x30, 0x84, 0xFF, 0xFF]))"}},"data":"AAAA"}"#
        )
        let document = #"{"format":"kc-export","version":1,"exported":"2024-02-01T00:00:00Z","items":["# + items.joined(separator: ",") + "]}"
        try document.write(toFile: h.directory + "/export.json", atomically: true, encoding: .utf8)
        out = try h.kc(["import", h.directory + "/export.json"], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        let names = [
            "when-unlocked", "after-first-unlock", "always", "when-unlocked-this-device-only",
            "after-first-unlock-this-device-only", "always-this-device-only", "when-passcode-set-this-device-only"
        ]
        for (n, name) in names.enumerated() {
            out = try h.kc(["find", "-s", "acc\(n)"], password: pw)
            #expect(out.stdout.contains("\naccessible: \(name)\n"), "\(out.stdout)")
        }
        out = try h.kc(["find", "--class", "certificate", "-l", "evil"], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("\nissuer: CN=x\\1B]0\\;pwned\\07\\, O=fake\n"), "escaped, one attribute: \(out.stdout)")
        #expect(out.stdout.contains("\nsubject: 0x3084ffff\n"), "not DER: hex: \(out.stdout)")
        #expect(!out.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "no control character reaches the terminal")
    }
}
