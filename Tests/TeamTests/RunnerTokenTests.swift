import Foundation
import Testing
import KeychainCore
import TeamCore

/// Runner tokens, `kcr1:` + base64url (no padding) of
/// `u8 1 ‖ keychain_id[32] ‖ seed[32] ‖ u16be len ‖ name ‖ u16be len ‖ dsn` (docs/team.md).
@Suite struct RunnerTokenTests {
    static let id = (0..<32).map { UInt8($0 * 7 & 0xff) }
    static let seed = (0..<32).map { UInt8(0xa0 ^ $0) }
    static let dsn = "postgresql://ci-prod:s3cret@db.example.com:5432/kc?sslmode=verify-full"

    /// The payload laid out by hand, independently of `RunnerToken`.
    static func payload(
        version: UInt8 = 1, id: [UInt8] = id, seed: [UInt8] = seed, name: [UInt8] = Array("infra".utf8),
        dsn: [UInt8] = Array(dsn.utf8), trailing: [UInt8] = []
    ) -> [UInt8] {
        func length(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xff)] }
        return [version] + id + seed + length(name.count) + name + length(dsn.count) + dsn + trailing
    }

    /// base64url without padding, by Foundation (not libsodium, which `RunnerToken` uses).
    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func parse(_ text: String) throws -> RunnerToken {
        try RunnerToken.parse(SecureBytes(copying: Array(text.utf8)))
    }

    static func bytes(_ secure: borrowing SecureBytes) -> [UInt8] { secure.withUnsafeBytes { Array($0) } }

    @Test func aTokenLaidOutByHandParses() throws {
        let token = try Self.parse("kcr1:" + Self.base64url(Self.payload()))
        #expect(token.keychainID == Self.id)
        #expect(Self.bytes(token.seed) == Self.seed)
        #expect(token.name == "infra")
        #expect(Self.bytes(token.dsn) == Array(Self.dsn.utf8))
    }

    @Test func aTokenRoundTrips() throws {
        let made = try RunnerToken(
            keychainID: Self.id, seed: SecureBytes(copying: Self.seed), name: "ci-prod_2",
            dsn: SecureBytes(copying: Array(Self.dsn.utf8)))
        let text = Self.bytes(try made.encoded())
        let string = String(decoding: text, as: UTF8.self)
        #expect(string == "kcr1:" + Self.base64url(Self.payload(name: Array("ci-prod_2".utf8))), "the layout of docs/team.md")
        #expect(string.dropFirst(5).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "one word for a CI secret store")
        let back = try RunnerToken.parse(SecureBytes(copying: text))
        #expect(back.keychainID == Self.id && Self.bytes(back.seed) == Self.seed && back.name == "ci-prod_2")
        #expect(Self.bytes(back.dsn) == Array(Self.dsn.utf8))
        // Every payload length modulo 3 (no padding to drop or to mistake).
        for extra in 0..<3 {
            let dsn = Self.dsn + String(repeating: "x", count: extra)
            let t = try RunnerToken(keychainID: Self.id, seed: SecureBytes(copying: Self.seed), name: "a", dsn: SecureBytes(copying: Array(dsn.utf8)))
            let again = try RunnerToken.parse(t.encoded())
            #expect(Self.bytes(again.dsn) == Array(dsn.utf8) && again.name == "a")
        }
    }

    /// Malformed tokens and what the error says of each.
    static let malformed: [(String, String)] = {
        var cases: [(String, String)] = []
        cases.append(("kcr2:" + base64url(payload()), "does not start with kcr1:"))
        cases.append(("KCR1:" + base64url(payload()), "does not start with kcr1:"))
        cases.append((base64url(payload()), "does not start with kcr1:"))
        cases.append(("kcr1:", "not base64url"))
        cases.append(("kcr1:" + base64url(payload()) + "=", "not base64url"))
        // Standard base64 (+, /, =) is not base64url.
        cases.append(("kcr1:" + Data(payload(seed: [UInt8](repeating: 0xff, count: 32))).base64EncodedString(), "not base64url"))
        cases.append(("kcr1:" + base64url(payload()) + "\n", "not base64url"))
        cases.append(("kcr1:" + base64url(payload()).replacingOccurrences(of: "A", with: "*"), "not base64url"))
        cases.append(("kcr1:" + base64url(payload(version: 2)), "version 2"))
        cases.append(("kcr1:" + base64url(payload(version: 0)), "version 0"))
        cases.append(("kcr1:" + base64url(Array(payload().prefix(40))), "too short"))
        cases.append(("kcr1:" + base64url(Array(payload().prefix(66))), "too short"))
        cases.append(("kcr1:" + base64url(Array(payload().dropLast(1))), "too short"))
        cases.append(("kcr1:" + base64url(payload(name: Array("Infra".utf8))), "is not a team name"))
        cases.append(("kcr1:" + base64url(payload(name: [])), "is not a team name"))
        cases.append(("kcr1:" + base64url(payload(name: Array("../x".utf8))), "is not a team name"))
        cases.append(("kcr1:" + base64url(payload(name: [0xff, 0xfe])), "not UTF-8"))
        cases.append(("kcr1:" + base64url(payload(dsn: [])), "DSN"))
        cases.append(("kcr1:" + base64url(payload(dsn: Array("host=a\0b".utf8))), "DSN"))
        cases.append(("kcr1:" + base64url(payload(trailing: [0])), "follows its DSN (1 bytes)"))
        cases.append(("kcr1:" + base64url(payload(trailing: Array("more".utf8))), "follows its DSN (4 bytes)"))
        return cases
    }()

    /// Each malformed token is errSecParam, saying what is wrong and quoting nothing of it.
    @Test(arguments: RunnerTokenTests.malformed)
    func aMalformedTokenIsRefused(_ text: String, _ why: String) {
        do {
            _ = try Self.parse(text)
            Issue.record("accepted: \(why)")
        } catch let error as KeychainError {
            #expect(error.status == errSecParam)
            #expect(error.message.hasPrefix("the runner token is malformed") && error.message.contains(why), "\(error.message)")
            #expect(!error.message.contains("s3cret") && !error.message.contains(Self.base64url(Self.payload()).prefix(12)), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// The parts are checked when a token is made, too.
    @Test func aTokenIsMadeOnlyFromValidParts() throws {
        #expect(throws: KeychainError.self) {
            try RunnerToken(keychainID: Array(Self.id.prefix(31)), seed: SecureBytes(copying: Self.seed), name: "a", dsn: SecureBytes(copying: [0x61]))
        }
        #expect(throws: KeychainError.self) {
            try RunnerToken(keychainID: Self.id, seed: SecureBytes(copying: Array(Self.seed.prefix(16))), name: "a", dsn: SecureBytes(copying: [0x61]))
        }
        #expect(throws: KeychainError.self) {
            try RunnerToken(keychainID: Self.id, seed: SecureBytes(copying: Self.seed), name: "-a", dsn: SecureBytes(copying: [0x61]))
        }
        #expect(throws: KeychainError.self) {
            try RunnerToken(keychainID: Self.id, seed: SecureBytes(copying: Self.seed), name: "a", dsn: SecureBytes(count: 0))
        }
        #expect(throws: KeychainError.self) {
            try RunnerToken(
                keychainID: Self.id, seed: SecureBytes(copying: Self.seed), name: "a", dsn: SecureBytes(copying: [UInt8](repeating: 0x61, count: 65536)))
        }
    }
}
