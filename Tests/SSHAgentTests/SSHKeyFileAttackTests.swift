import Foundation
import KCTestSupport
import KeychainCore
@testable import SSHAgent
import Testing

/// Crafted and damaged key files: every one is refused with a status and a message
/// (errSecDecode 93 or errSecParam 206, errSecAuthFailed 51 for a wrong passphrase), never
/// a crash, a hang or a key.
@Suite struct SSHKeyFileAttackTests {
    static let refusals: Set<OSStatus> = [errSecDecode, errSecParam, errSecAuthFailed, errSecDataTooLarge]

    /// A real key file's text and its decoded binary.
    static func sample(_ options: [String], passphrase: String = "") throws -> (home: SSHKeyHome, text: [UInt8], binary: [UInt8]) {
        let h = try SSHKeyHome()
        try h.keygen("key", options, passphrase: passphrase)
        let text = Array(try Data(contentsOf: URL(fileURLWithPath: h.directory + "/key")))
        let body = String(decoding: text, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return (h, text, Array(Data(base64Encoded: body) ?? Data()))
    }

    /// The armoured file of `binary`.
    static func armour(_ binary: [UInt8]) -> [UInt8] {
        Array(
            ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + Data(binary).base64EncodedString(options: .lineLength64Characters)
                + "\n-----END OPENSSH PRIVATE KEY-----\n").utf8)
    }

    /// What reading `text` with `passphrase` ends in: nil for a key, else the status.
    static func outcome(_ text: [UInt8], passphrase: String? = nil) -> OSStatus? {
        do {
            var (key, _) = try SSHKeyFile(text).privateKey(passphrase: passphrase.map { Array($0.utf8) })
            key.wipe()
            return nil
        } catch let error as KeychainError {
            return error.status
        } catch {
            return errSecInternalError
        }
    }

    /// Every truncation of an unencrypted and an encrypted file is refused.
    @Test(arguments: [["-t", "ed25519"], ["-t", "ecdsa"], ["-t", "rsa", "-b", "2048"]])
    func everyTruncationRefused(_ options: [String]) throws {
        let (_, _, binary) = try Self.sample(options)
        #expect(Self.outcome(Self.armour(binary)) == nil, "the whole file reads")
        for length in 0..<binary.count {
            let status = Self.outcome(Self.armour(Array(binary[..<length])))
            #expect(status.map { Self.refusals.contains($0) } == true, "truncated to \(length): \(String(describing: status))")
        }
    }

    /// Seeded fuzz: bytes changed at random in the binary (and the armour) give a status,
    /// not a crash, and never a key other than the original.
    @Test func seededFuzz() throws {
        let (_, _, binary) = try Self.sample(["-t", "ed25519"])
        let (_, _, encrypted) = try Self.sample(["-t", "ed25519", "-a", "1"], passphrase: "pw")
        var random = SplitMix64(seed: 0x5EED_0034)
        for round in 0..<600 {
            var bytes = round % 3 == 0 ? encrypted : binary
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let i = Int.random(in: 0..<bytes.count, using: &random)
                bytes[i] = round % 2 == 0 ? UInt8.random(in: 0...255, using: &random) : bytes[i] ^ (1 << UInt8.random(in: 0...7, using: &random))
            }
            let status = Self.outcome(Self.armour(bytes), passphrase: round % 3 == 0 ? "pw" : nil)
            if let status {
                #expect(Self.refusals.contains(status), "round \(round): \(status)")
            }
        }
    }

    /// Seeded fuzz of the wire form itself (what a key item's secret holds, and what the
    /// pairwise check hands libcrypto), for each key type: a status, never a crash.
    @Test(arguments: [["-t", "ed25519"], ["-t", "ecdsa", "-b", "384"], ["-t", "rsa", "-b", "2048"]])
    func wireFormFuzz(_ options: [String]) throws {
        let (_, _, binary) = try Self.sample(options)
        let wire = try SSHKeyFile(Self.armour(binary)).privateKey(passphrase: nil).key.wire
        #expect((try? SSHPrivateKey(wire: wire)) != nil)
        var random = SplitMix64(seed: 0x3417_0000 ^ UInt64(wire.count))
        for round in 0..<300 {
            var bytes = wire
            if round % 5 == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            do {
                _ = try SSHPrivateKey(wire: bytes)
            } catch let error as KeychainError {
                #expect(Self.refusals.contains(error.status), "round \(round): \(error)")
            }
        }
    }

    /// Hand-made files, each named after the failure it must cause.
    @Test func craftedFiles() throws {
        let (h, _, binary) = try Self.sample(["-t", "ed25519"])
        func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func str(_ s: [UInt8]) -> [UInt8] { u32(UInt32(s.count)) + s }
        let magic = Array("openssh-key-v1".utf8) + [0]
        let cases: [(String, [UInt8], OSStatus)] = [
            ("a length of 4 GiB", magic + u32(0xFFFF_FFFF), errSecDecode),
            ("an unknown cipher", magic + str(Array("3des-cbc".utf8)) + str(Array("bcrypt".utf8)), errSecParam),
            (
                "bcrypt with 2^32-1 rounds",
                magic + str(Array("aes256-ctr".utf8)) + str(Array("bcrypt".utf8)) + str(str([1, 2, 3, 4]) + u32(0xFFFF_FFFF)) + u32(1) + str([0])
                    + str([UInt8](repeating: 0, count: 16)), errSecParam
            ),
            ("two keys", magic + str(Array("none".utf8)) + str(Array("none".utf8)) + str([]) + u32(2), errSecParam),
            ("no magic", Array(binary.dropFirst(1)), errSecDecode),
            (
                "a private section not in blocks", magic + str(Array("none".utf8)) + str(Array("none".utf8)) + str([]) + u32(1) + str([0]) + str([1, 2, 3]),
                errSecDecode
            )
        ]
        for (name, bytes, expected) in cases {
            #expect(Self.outcome(Self.armour(bytes)) == expected, "\(name)")
        }
        // Through the binary: the exit code is the status's, the message says what is wrong.
        try h.write("truncated", Self.armour(Array(binary.prefix(binary.count / 2))))
        var out = try h.ssh(["add", "truncated"])
        #expect(out.status == 93 && out.stderr.hasPrefix("kc: the key file"), "\(out.stderr)")
        out = try h.ssh(["add", "key.pub"])
        #expect(out.status == 93 && out.stderr.contains("kc: hint: give the private key file"), "\(out.stderr)")
        try h.write("rounds", Self.armour(cases[2].1))
        out = try h.ssh(["add", "rounds", "--passphrase-file", "key.pub"])
        #expect(out.status == 206 && out.stderr.contains("rounds"), "\(out.stderr)")
        #expect(try h.ssh(["list"]).stdout.isEmpty)
    }

    /// A file whose public key (in its header and its private section alike) is another
    /// key's: the halves do not belong together, and the key is refused (errSecDecode), for
    /// Ed25519 by libsodium's derivation, for ECDSA and RSA by libcrypto's pairwise check.
    @Test(arguments: [["-t", "ed25519"], ["-t", "ecdsa"], ["-t", "rsa", "-b", "2048"]])
    func mismatchedHalvesRefused(_ options: [String]) throws {
        let a = try Self.sample(options).binary
        let b = try Self.sample(options).binary
        func publicField(_ binary: [UInt8]) throws -> [UInt8] {
            let blob = try SSHKeyFile(Self.armour(binary)).privateKey(passphrase: nil).key.publicBlob
            var r = SSHWireReader(blob)
            _ = try r.string()
            if options[1] == "ecdsa" { _ = try r.string() }
            if options[1] == "rsa" { _ = try r.string() }   // e; then n
            return try r.string()
        }
        let (mine, theirs) = (try publicField(a), try publicField(b))
        #expect(mine.count == theirs.count, "same-sized fields (rerun if an RSA modulus lost a byte)")
        var forged = a
        var replaced = 0
        var i = 0
        while i + mine.count <= forged.count {
            if Array(forged[i..<(i + mine.count)]) == mine {
                forged.replaceSubrange(i..<(i + mine.count), with: theirs)
                replaced += 1
                i += mine.count
            } else {
                i += 1
            }
        }
        #expect(replaced >= 2, "the header's and the private section's public key")
        #expect(Self.outcome(Self.armour(forged)) == errSecDecode)
    }

    /// bcrypt_pbkdf's Blowfish starts from pi's digits, computed here: the published first
    /// and last words of the P-array and S-boxes (Schneier 1993).
    @Test func blowfishInitialState() throws {
        #expect(BlowfishConstants.p.count == 18 && BlowfishConstants.s.count == 1024)
        #expect(BlowfishConstants.p.first == 0x243F_6A88 && BlowfishConstants.p.last == 0x8979_FB1B)
        #expect(BlowfishConstants.s.first == 0xD131_0BA6 && BlowfishConstants.s[255] == 0x6E85_076A)
        #expect(BlowfishConstants.s[256] == 0x4B7A_70E9 && BlowfishConstants.s.last == 0x3AC3_72E6)
        let key = try SSHKeyFile(Self.armour(try Self.sample(["-t", "ed25519", "-a", "2"], passphrase: "x").binary)).privateKey(passphrase: Array("x".utf8))
        #expect(key.key.type == .ed25519, "a key ssh-keygen encrypted decrypts with kc's bcrypt_pbkdf")
    }
}
