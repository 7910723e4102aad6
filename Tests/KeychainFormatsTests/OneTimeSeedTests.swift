import Foundation
import Testing
import KeychainCore
import KeychainFormats

/// One-time codes against the RFCs' own test values (`Tests/Vectors/otp/`, copied from
/// RFC 6238 Appendix B, RFC 4226 Appendix D and RFC 2202 §3), and `otpauth://` URIs as
/// password managers write them.
@Suite struct OneTimeSeedTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/otp").path

    /// The vector file's rows, comments left out.
    static func rows(_ name: String) throws -> [[String]] {
        try String(contentsOfFile: folder + "/" + name, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.isEmpty }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
    }

    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex { let j = s.index(i, offsetBy: 2); out.append(UInt8(s[i..<j], radix: 16)!); i = j }
        return out
    }

    /// RFC 6238's seeds: the ASCII digits repeated to the hash's length.
    static func rfc6238Seed(_ algorithm: HMAC.Algorithm) -> [UInt8] {
        Array(String(repeating: "1234567890", count: 7).utf8.prefix(algorithm.length))
    }

    @Test func hmacSHA1MatchesRFC2202() throws {
        let rows = try Self.rows("rfc2202-hmac-sha1.txt")
        #expect(rows.count == 3)
        for row in rows {
            let mac = HMAC.authenticate(Self.hex(row[1]), key: Self.hex(row[0]), algorithm: .sha1)
            #expect(mac == Self.hex(row[2]), "key of \(row[0].count / 2) bytes")
        }
    }

    @Test func totpMatchesRFC6238AppendixB() throws {
        let rows = try Self.rows("rfc6238-appendix-b.txt")
        #expect(rows.count == 18)
        for row in rows {
            let algorithm = try #require(HMAC.Algorithm(rawValue: row[1]))
            let seed = try OneTimeSeed(key: Self.rfc6238Seed(algorithm), kind: .totp(period: 30), algorithm: algorithm, digits: 8)
            #expect(seed.code(at: try #require(Int64(row[0]))) == row[2], "\(row[0]) \(row[1])")
        }
    }

    @Test func hotpMatchesRFC4226AppendixD() throws {
        let rows = try Self.rows("rfc4226-appendix-d.txt")
        #expect(rows.count == 10)
        let seed = try OneTimeSeed(key: Array("12345678901234567890".utf8), kind: .hotp(counter: 0))
        for row in rows {
            #expect(seed.code(counter: try #require(UInt64(row[0]))) == row[1], "counter \(row[0])")
        }
    }

    /// The code changes exactly at k·period, not a second before; the seconds left count down to 1.
    @Test func periodBoundary() throws {
        let seed = try OneTimeSeed(uri: Array("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8&period=45".utf8))
        for k in Int64(1)...Int64(4) {
            let before = seed.code(at: k * 45 - 1), at = seed.code(at: k * 45)
            #expect(before == seed.code(counter: UInt64(k - 1)) && at == seed.code(counter: UInt64(k)))
            #expect(seed.code(at: (k - 1) * 45) == before, "one code for the whole step")
            #expect(seed.secondsLeft(at: k * 45 - 1) == 1 && seed.secondsLeft(at: k * 45) == 45)
        }
    }

    @Test func base32AsSitesWriteIt() throws {
        let key = Array("12345678901234567890".utf8)
        let canonical = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        #expect(try Base32.decode(Array(canonical.utf8)) == key)
        #expect(try Base32.decode(Array(canonical.lowercased().utf8)) == key, "lower case")
        #expect(try Base32.decode(Array("gezd gnbv gy3t qojq GEZD GNBV GY3T QOJQ".utf8)) == key, "spaces")
        #expect(try Base32.decode(Array("MZXW6===".utf8)) == Array("foo".utf8), "padding")
        #expect(try Base32.decode(Array("MZXW6".utf8)) == Array("foo".utf8), "no padding")
        #expect(Base32.encode(Array("foobar".utf8)) == Array("MZXW6YTBOI".utf8))
        #expect(Base32.encode(key) == Array(canonical.utf8))
        for (bad, fault) in [("GEZD1NBV", "position 5"), ("GEZ=DGNB", "after its = padding"), ("====", "empty"), ("G", "too short")] {
            #expect { try Base32.decode(Array(bad.utf8)) } throws: { error in
                let e = error as? KeychainError
                return e?.status == errSecParam && e?.message.contains(fault) == true && e?.message.contains(bad) == false
            }
        }
    }

    @Test func uriDetails() throws {
        // Percent-encoding in the label and values, the issuer, case, SHA512, 7 digits, period 60.
        var seed = try OneTimeSeed(
            uri: Array("  OTPAUTH://TOTP/ACME%20Co%3Aalice%40example.com?SECRET=gezdgnbvgy3tqojq%3D%3D&Algorithm=sha-512&digits=7&period=60&image=x\n".utf8))
        #expect(seed.algorithm == .sha512 && seed.digits == 7 && seed.period == 60)
        #expect(seed.issuer == "ACME Co" && seed.accountName == "alice@example.com")
        seed = try OneTimeSeed(uri: Array("otpauth://totp/Label:bob?secret=GEZDGNBV&issuer=Real".utf8))
        #expect(seed.issuer == "Real" && seed.accountName == "bob", "the issuer parameter wins")
        seed = try OneTimeSeed(uri: Array("otpauth://hotp/x?secret=GEZDGNBV&counter=41".utf8))
        #expect(seed.kind == .hotp(counter: 41) && seed.isCounterBased)
        seed = try OneTimeSeed(uri: Array("otpauth://totp/Steam:me?secret=GEZDGNBV&digits=5&encoder=steam&issuer=Steam".utf8))
        #expect(seed.steam && seed.digits == 5 && seed.code(at: 0).count == 5)
        #expect(seed.code(at: 0).utf8.allSatisfy { OneTimeSeed.steamAlphabet.contains($0) })
    }

    /// Every fault is errSecParam naming it, and no message holds the secret.
    @Test func malformedURIsNameTheirFault() throws {
        let secret = "GEZDGNBVGY3TQOJQ"
        let cases: [(String, String)] = [
            ("https://example.com/?secret=\(secret)", "does not start with otpauth://"),
            ("otpauth://totp/x", "no secret"),
            ("otpauth://totp/x?issuer=a", "no secret"),
            ("otpauth://motp/x?secret=\(secret)", "not totp or hotp"),
            ("otpauth://totp/x?secret=\(secret)8", "not base32 at position 17"),
            ("otpauth://totp/x?secret=\(secret)&algorithm=MD5", "unknown algorithm \"MD5\""),
            ("otpauth://totp/x?secret=\(secret)&digits=9", "digits must be 6, 7 or 8, not 9"),
            ("otpauth://totp/x?secret=\(secret)&digits=5", "digits must be 6, 7 or 8, not 5"),
            ("otpauth://totp/x?secret=\(secret)&digits=six", "digits must be 6, 7 or 8"),
            ("otpauth://totp/x?secret=\(secret)&period=0", "period must be"),
            ("otpauth://totp/x?secret=\(secret)&period=-30", "period must be"),
            ("otpauth://hotp/x?secret=\(secret)&counter=-1", "counter must be"),
            ("otpauth://totp/x?secret=\(secret)&secret=\(secret)", "two secret"),
            ("otpauth://hotp/x?secret=\(secret)&counter=0&counter=5", "two counter parameters"),
            ("otpauth://totp/x?secret=\(secret)&period=30&Period=60", "two period parameters"),
            ("otpauth://totp/x?secret=GEZD%zzGNBV", "malformed %-escape")
        ]
        for (uri, fault) in cases {
            #expect { try OneTimeSeed(uri: Array(uri.utf8)) } throws: { error in
                guard let e = error as? KeychainError else { return false }
                return e.status == errSecParam && e.message.contains(fault) && !e.message.contains("GEZD")
                    && !(e.hint ?? "").contains("GEZD")
            }
        }
    }

    /// The counter is replaced where it is, or added; every other byte stays.
    @Test func counterIsRewrittenInPlace() throws {
        let uri = "otpauth://hotp/A%20B:c?secret=GEZDGNBV&Counter=9&issuer=A%20B"
        #expect(
            String(decoding: OneTimeSeed.settingCounter(Array(uri.utf8), to: 10), as: UTF8.self)
                == "otpauth://hotp/A%20B:c?secret=GEZDGNBV&counter=10&issuer=A%20B")
        #expect(
            String(decoding: OneTimeSeed.settingCounter(Array("otpauth://hotp/x?secret=GEZDGNBV\n".utf8), to: 1), as: UTF8.self)
                == "otpauth://hotp/x?secret=GEZDGNBV&counter=1")
        #expect(
            String(decoding: OneTimeSeed.settingCounter(Array("otpauth://hotp/x".utf8), to: 2), as: UTF8.self)
                == "otpauth://hotp/x?counter=2")
    }

    @Test func aBase32SeedBecomesAURI() throws {
        let uri = try OneTimeSeed.uri(
            base32: Array("gezd gnbv gy3t qojq===".utf8), issuer: "git hub", account: "al/ice",
            kind: .totp(period: 60), algorithm: .sha256, digits: 8)
        #expect(
            String(decoding: uri, as: UTF8.self)
                == "otpauth://totp/git%20hub:al%2Fice?secret=GEZDGNBVGY3TQOJQ&issuer=git%20hub&algorithm=SHA256&digits=8&period=60")
        let hotp = try OneTimeSeed.uri(
            base32: Array("GEZDGNBV".utf8), issuer: "x", account: "", kind: .hotp(counter: 0),
            algorithm: .sha1, digits: 6)
        #expect(String(decoding: hotp, as: UTF8.self) == "otpauth://hotp/x?secret=GEZDGNBV&issuer=x&counter=0")
    }
}
