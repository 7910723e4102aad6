import Foundation
import Testing
import KeychainCore
import TeamCore

/// Runner tokens (`docs/format.md` §9.2): what `kc team add-runner` prints parses back to the
/// same membership, has the documented layout (decoded by Python), and anything else is
/// refused without being repeated in the message.
@Suite struct RunnerTokenTests {
    /// The DSN of the tokens.
    static let dsn = "postgresql://ci@db.internal:5432/kc?sslmode=verify-full"

    @Test func aTokenRoundTrips() throws {
        let keys = try MemberKeys.generate()
        let id = Sodium.randomBytes(32)
        let text = try RunnerToken.encode(keychainID: id, seed: keys.seed, teamName: "ci-prod", dsn: Self.dsn)
        #expect(text.hasPrefix("kcr1:"))
        #expect(text.dropFirst(5).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        for form in [text, text + "\n", "  " + text + "\r\n"] {
            let token = try RunnerToken.parse(form)
            #expect(token.keychainID == id && token.teamName == "ci-prod" && token.dsn == Self.dsn)
            #expect(try MemberKeys(seed: token.seed).memberID == keys.memberID)
        }
    }

    /// The layout, decoded independently by Python.
    @Test func theLayoutIsTheDocumentedOne() throws {
        let keys = try MemberKeys.generate()
        let id = Sodium.randomBytes(32)
        let text = try RunnerToken.encode(keychainID: id, seed: keys.seed, teamName: "infra", dsn: Self.dsn)
        let python = """
        import base64, sys
        t = sys.argv[1]
        assert t.startswith("kcr1:") and "=" not in t
        raw = base64.urlsafe_b64decode(t[5:] + "=" * (-len(t[5:]) % 4))
        assert raw[0] == 1
        n = int.from_bytes(raw[65:67], "big"); name = raw[67:67 + n]; o = 67 + n
        m = int.from_bytes(raw[o:o + 2], "big"); dsn = raw[o + 2:o + 2 + m]
        assert o + 2 + m == len(raw)
        print(raw[1:33].hex(), raw[33:65].hex(), name.decode(), dsn.decode())
        """
        let seedHex = keys.seed.withUnsafeBytes { Hex.encode(Array($0)) }
        #expect(try PythonReference.run(python, [text]) == "\(Hex.encode(id)) \(seedHex) infra \(Self.dsn)")
    }

    @Test func aMalformedTokenIsRefusedWithoutRepeatingIt() throws {
        let keys = try MemberKeys.generate()
        let good = try RunnerToken.encode(keychainID: Sodium.randomBytes(32), seed: keys.seed, teamName: "infra", dsn: Self.dsn)
        let body = String(good.dropFirst(5))
        var wrongVersion = Array(Data(base64Encoded: Self.standard(body)) ?? Data())
        wrongVersion[0] = 2
        var trailing = Array(Data(base64Encoded: Self.standard(body)) ?? Data())
        trailing.append(0)
        var badName = Array(Data(base64Encoded: Self.standard(body)) ?? Data())
        badName[67] = UInt8(ascii: "I")
        let bad = ["", "kcr1:", "kcr2:" + body, "kct1:" + body, good + "=", good + "A", String(good.dropLast(3)),
                   "kcr1:" + body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "+/",
                   "kcr1:" + Self.urlsafe(wrongVersion), "kcr1:" + Self.urlsafe(trailing), "kcr1:" + Self.urlsafe(badName)]
        for text in bad {
            do {
                _ = try RunnerToken.parse(text)
                Issue.record("accepted \(text)")
            } catch let e as KeychainError {
                #expect(e.status == errSecParam)
                #expect(!e.message.contains(body.prefix(12)) && !(e.hint ?? "").contains(body.prefix(12)))
            }
        }
    }

    /// Base64url without padding to standard Base64 with padding (for Foundation).
    static func standard(_ s: String) -> String {
        let t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return t + String(repeating: "=", count: (4 - t.count % 4) % 4)
    }

    /// Bytes to base64url without padding.
    static func urlsafe(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
