import Foundation
import KCTestSupport
import SSHAgent
import Testing

/// A key file chooses how long its key derivation takes: `kc ssh add` reads the cost first
/// and refuses one over its caps (errSecParam, 206) before it asks for a passphrase or
/// decrypts anything, so a crafted file cannot keep it busy for minutes.
@Suite struct KeyFileCostTests {
    /// An ssh-keygen file (16 rounds) with its bcrypt round count set to `rounds`.
    static func withRounds(_ rounds: UInt32) throws -> (SSHKeyHome, [UInt8]) {
        let (h, _, binary) = try SSHKeyFileAttackTests.sample(["-t", "ed25519"], passphrase: "pw")
        var b = binary
        func u32(_ at: Int) -> Int { b[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var i = 15   // "openssh-key-v1\0"
        i += 4 + u32(i)   // cipher
        i += 4 + u32(i)   // kdf
        i += 4   // the options' length
        i += 4 + u32(i)   // salt
        b[i..<i + 4] = [UInt8(rounds >> 24), UInt8(rounds >> 16 & 0xff), UInt8(rounds >> 8 & 0xff), UInt8(rounds & 0xff)]
        return (h, SSHKeyFileAttackTests.armour(b))
    }

    @Test func tooManyBcryptRoundsAreRefusedBeforeThePassphraseIsAsked() throws {
        let (h, file) = try Self.withRounds(BcryptPBKDF.maxRounds + 1)
        try h.write("key", file)
        // No passphrase file, no terminal: the cost is refused first (not "no terminal", 36).
        var out = try h.ssh(["add", "key"])
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("bcrypt rounds"), "\(out.stderr)")
        try h.write("phrase", Array("pw\n".utf8))
        out = try h.ssh(["add", "key", "--passphrase-file", "phrase"])
        #expect(out.status == 206, "\(out.stderr)")
    }

    @Test func theBcryptCapIsOneThousandRounds() {
        #expect(BcryptPBKDF.maxRounds == 1000)
    }

    /// openssl's encrypted PKCS#8 with the PBKDF2 count past the cap: refused at once, where
    /// libcrypto would have run the iterations.
    @Test func tooManyPKCS8IterationsAreRefused() throws {
        let h = try SSHKeyHome()
        try h.keygen("plain", ["-t", "ecdsa", "-m", "PEM"])
        try h.write("phrase", Array("pw\n".utf8))
        for (iterations, refused) in [(PKCS8Cost.maxIterations + 1, true), (2048, false)] {
            let made = try h.tool([
                "/usr/bin/openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-iter", String(iterations), "-in", "plain",
                "-out", "enc\(iterations).pem", "-passout", "pass:pw"
            ])
            #expect(made.status == 0, "\(made.stderr)")
            let started = Date()
            let out = try h.ssh(["add", "enc\(iterations).pem", "--name", "k\(iterations)", "--passphrase-file", "phrase"])
            if refused {
                #expect(out.status == 206, "\(out.stderr)")
                #expect(out.stderr.contains("iterations"), "\(out.stderr)")
                #expect(Date().timeIntervalSince(started) < 5)
            } else {
                #expect(out.status == 0, "\(out.stderr)")
            }
        }
    }

    /// scrypt (openssl's default parameters) is read; its r set past the cap is refused.
    @Test func scryptParametersAreCapped() throws {
        let h = try SSHKeyHome()
        try h.keygen("plain", ["-t", "ecdsa", "-m", "PEM"])
        try h.write("phrase", Array("pw\n".utf8))
        let made = try h.tool([
            "/usr/bin/openssl", "pkcs8", "-topk8", "-scrypt", "-in", "plain", "-out", "enc.pem", "-passout", "pass:pw"
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let pem = try String(contentsOfFile: h.directory + "/enc.pem", encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var der = Array(try #require(Data(base64Encoded: body)))
        // N = 16384 (02 02 40 00), r = 8 (02 01 08), p = 1 (02 01 01): r becomes 127.
        let pattern: [UInt8] = [0x02, 0x02, 0x40, 0x00, 0x02, 0x01, 0x08, 0x02, 0x01, 0x01]
        let at = try #require((0...(der.count - pattern.count)).first { Array(der[$0..<$0 + pattern.count]) == pattern })
        der[at + 6] = 0x7f
        let evil =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END ENCRYPTED PRIVATE KEY-----\n"
        try h.write("evil.pem", Array(evil.utf8))
        var out = try h.ssh(["add", "evil.pem", "--passphrase-file", "phrase"])
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("scrypt"), "\(out.stderr)")
        out = try h.ssh(["add", "enc.pem", "--passphrase-file", "phrase"])
        #expect(out.status == 0, "\(out.stderr)")
    }
}
