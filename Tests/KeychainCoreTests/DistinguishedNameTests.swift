import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// Certificate names as RFC 4514 text (`DistinguishedName`) and a key blob's class, type
/// and size (`KeyBlob`), on the test vectors and on crafted DER.
///
/// Expected names come from OpenSSL, not from the code under test:
/// `openssl x509 -inform DER -noout -subject -issuer -nameopt RFC2253` on each certificate
/// (RFC 2253 writes "," where kc writes ", "). The key vectors were made with OpenSSL 3.0:
///   key-rsa-3072.pem              openssl genrsa 3072 (PKCS #8 PEM, a throwaway test key)
///   key-rsa-3072-pkcs1.der        openssl rsa -traditional -outform DER
///   key-rsa-3072-spki.der         openssl rsa -pubout -outform DER
///   key-rsa-3072-pkcs1-public.der openssl rsa -RSAPublicKey_out -outform DER
///   key-ec-p384-pkcs8.der         openssl ecparam -name secp384r1 -genkey | openssl pkcs8 -topk8 -nocrypt -outform DER
@Suite struct DistinguishedNameTests {
    static func vector(_ name: String) throws -> [UInt8] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/" + name).path
        return [UInt8](try #require(FileManager.default.contents(atPath: path), "missing test vector \(path)"))
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let n = content.count
        let length: [UInt8] = n < 0x80 ? [UInt8(n)] : n < 0x100 ? [0x81, UInt8(n)] : [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
        return [tag] + length + content
    }

    /// One RDN SET of the given (OID content, value TLV) attributes.
    static func rdn(_ attributes: [([UInt8], [UInt8])]) -> [UInt8] {
        tlv(0x31, attributes.flatMap { tlv(0x30, tlv(0x06, $0.0) + $0.1) })
    }

    static let cn: [UInt8] = [0x55, 0x04, 0x03], o: [UInt8] = [0x55, 0x04, 0x0A], ou: [UInt8] = [0x55, 0x04, 0x0B]

    @Test func namesOfTheCertificateVectorsMatchOpenSSL() throws {
        let expected = [
            "cert-rsa-v3.der": ("CN=kc RSA v3 Test, O=kc Test, C=US", "CN=kc RSA v3 Test, O=kc Test, C=US"),
            "cert-ec-v3.der": ("O=kc, CN=kc EC Test", "O=kc, CN=kc EC Test"),
            "cert-v1.der": ("CN=kc v1 Test", "CN=kc RSA v3 Test, O=kc Test, C=US")
        ]
        for (file, (subject, issuer)) in expected {
            let cert = try #require(DERCertificate(der: try Self.vector(file)))
            #expect(DistinguishedName.string(der: cert.subject) == subject, "\(file) subject")
            #expect(DistinguishedName.string(der: cert.issuer) == issuer, "\(file) issuer")
        }
    }

    @Test func rfc4514Escaping() {
        let name = Self.tlv(
            0x30,
            Self.rdn([(Self.o, Self.tlv(0x0C, Array("Smith, Jones & Co; \"A+B\" <x>\\".utf8)))])
                + Self.rdn([(Self.cn, Self.tlv(0x0C, Array("#1 admin ".utf8)))])
                + Self.rdn([(Self.ou, Self.tlv(0x0C, Array(" lead\u{1B}]0;x\u{07}".utf8)))]))
        #expect(
            DistinguishedName.string(der: name)
                == "OU=\\ lead\\1B]0\\;x\\07, CN=\\#1 admin\\ , O=Smith\\, Jones & Co\\; \\\"A\\+B\\\" \\<x\\>\\\\")
        // A '#' or space inside a value is not escaped; NUL is \00.
        let inner = Self.tlv(0x30, Self.rdn([(Self.cn, Self.tlv(0x0C, [0x61, 0x23, 0x20, 0x00, 0x62]))]))
        #expect(DistinguishedName.string(der: inner) == "CN=a# \\00b")
    }

    @Test func multiValuedRDNsUnknownTypesAndStringKinds() {
        let email: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01]
        let unknown: [UInt8] = [0x2A, 0x03, 0x04]   // 1.2.3.4
        let name = Self.tlv(
            0x30,
            Self.rdn([(Self.cn, Self.tlv(0x13, Array("web".utf8))), (Self.ou, Self.tlv(0x0C, Array("ops".utf8)))])
                + Self.rdn([(email, Self.tlv(0x16, Array("me@example.com".utf8)))])
                + Self.rdn([(unknown, Self.tlv(0x0C, Array("x".utf8)))])
                + Self.rdn([(Self.o, Self.tlv(0x1E, [0x00, 0x4B, 0x00, 0xF6]))])   // BMPString "Kö"
                + Self.rdn([(Self.o, Self.tlv(0x14, [0x4D, 0xFC]))])   // TeletexString (Latin-1) "Mü"
                + Self.rdn([(Self.o, Self.tlv(0x1C, [0, 0, 0, 0x5A, 0, 1, 0xF5, 0x11]))])   // UniversalString "Z🔑"
                + Self.rdn([(Self.cn, Self.tlv(0x04, [0xFF]))]))   // not a string type
        #expect(
            DistinguishedName.string(der: name)
                == "CN=#0401ff, O=Z🔑, O=Mü, O=Kö, 1.2.3.4=#0c0178, emailAddress=me@example.com, CN=web+OU=ops")
        // Invalid UTF-8 and an odd BMPString are not text: hex.
        let bad = Self.tlv(0x30, Self.rdn([(Self.cn, Self.tlv(0x0C, [0xC3]))]) + Self.rdn([(Self.o, Self.tlv(0x1E, [0x00]))]))
        #expect(DistinguishedName.string(der: bad) == "O=#1e0100, CN=#0c01c3")
        #expect(DistinguishedName.string(der: Self.tlv(0x30, [])) == "", "an empty name")
    }

    @Test func malformedNamesGiveNilAndNeverTrap() throws {
        #expect(DistinguishedName.string(der: []) == nil)
        #expect(DistinguishedName.string(der: Self.tlv(0x30, Self.tlv(0x31, []))) == nil, "an empty RDN")
        #expect(DistinguishedName.string(der: Self.tlv(0x30, Self.tlv(0x31, Self.tlv(0x30, Self.tlv(0x06, Self.cn))))) == nil, "no value")
        #expect(
            DistinguishedName.string(der: Self.tlv(0x30, Self.tlv(0x31, Self.tlv(0x30, Self.tlv(0x06, [0x80, 0x01]) + Self.tlv(0x0C, [])))))
                == nil, "a non-minimal OID")
        let hugeArc = Self.tlv(0x30, Self.rdn([([0x2A] + [UInt8](repeating: 0xFF, count: 12) + [0x01], Self.tlv(0x0C, [0x61]))]))
        #expect(DistinguishedName.string(der: hugeArc) == nil, "an arc over 63 bits")
        #expect(DistinguishedName.string(der: Self.tlv(0x30, []) + [0]) == nil, "bytes after the name")
        // Every prefix and every single-byte change of a real name returns.
        let subject = try #require(DERCertificate(der: try Self.vector("cert-rsa-v3.der"))).subject
        for cut in 0..<subject.count { _ = DistinguishedName.string(der: Array(subject.prefix(cut))) }
        for i in subject.indices {
            for value: UInt8 in [0x00, 0x7F, 0x80, 0x81, 0x84, 0xFF] {
                var changed = subject
                changed[i] = value
                _ = DistinguishedName.string(der: changed)
            }
        }
    }

    @Test func keyBlobsGiveClassTypeAndSize() throws {
        let cases: [(String, KeyBlob)] = [
            ("key-rsa-3072.pem", KeyBlob(keyClass: 1, keyType: 42, bits: 3072)),
            ("key-rsa-3072-pkcs1.der", KeyBlob(keyClass: 1, keyType: 42, bits: 3072)),
            ("key-rsa-3072-spki.der", KeyBlob(keyClass: 0, keyType: 42, bits: 3072)),
            ("key-rsa-3072-pkcs1-public.der", KeyBlob(keyClass: 0, keyType: 42, bits: 3072)),
            ("key-ec-p384-pkcs8.der", KeyBlob(keyClass: 1, keyType: 73, bits: 384))
        ]
        for (file, expected) in cases {
            #expect(KeyBlob(data: try Self.vector(file)) == expected, "\(file)")
        }
        #expect(KeyBlob(data: [1, 2, 3, 4]) == nil, "an opaque blob")
        #expect(KeyBlob(data: try Self.vector("cert-rsa-v3.der")) == nil, "a certificate is no key")
        #expect(KeyBlob(data: Array("-----BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nAAAA\n-----END PRIVATE KEY-----\n".utf8)) == nil)
        // A modulus with its top bit set needs a leading zero; its bit length counts from the top one.
        let modulus = Self.tlv(0x02, [0x00, 0x80] + [UInt8](repeating: 0, count: 127))
        #expect(KeyBlob(data: Self.tlv(0x30, modulus + Self.tlv(0x02, [3])))?.bits == 1024)
        #expect(KeyBlob(data: Self.tlv(0x30, Self.tlv(0x02, [0x00, 0x01]) + Self.tlv(0x02, [3]))) == nil, "a non-minimal INTEGER")
        #expect(KeyBlob(data: Self.tlv(0x30, Self.tlv(0x02, [0x80]) + Self.tlv(0x02, [3]))) == nil, "a negative modulus")
        // Every prefix of every vector returns.
        for file in cases.map(\.0) {
            let bytes = try Self.vector(file)
            for cut in stride(from: 0, to: bytes.count, by: 7) { _ = KeyBlob(data: Array(bytes.prefix(cut))) }
        }
    }
}
