import Foundation
import KCTestSupport
import Testing

/// Encrypted key files: ssh-keygen's default (aes256-ctr with bcrypt_pbkdf, which kc
/// implements itself), `-Z aes256-gcm@openssh.com`, and encrypted PEM; the passphrase from
/// --passphrase-file or typed on a terminal; a wrong one is errSecAuthFailed (51).
@Suite struct SSHKeyPassphraseTests {
    static let phrase = "correct horse battery staple"

    @Test(arguments: [
        ["-t", "ed25519"], ["-t", "ed25519", "-Z", "aes256-gcm@openssh.com"], ["-t", "ecdsa", "-Z", "aes128-ctr"],
        ["-t", "rsa", "-a", "4"], ["-t", "ecdsa", "-Z", "aes128-gcm@openssh.com", "-a", "3"]
    ])
    func passphraseFileDecrypts(_ options: [String]) throws {
        let h = try SSHKeyHome()
        try h.keygen("key", options, passphrase: Self.phrase, comment: "enc")
        try h.write("phrase", Array((Self.phrase + "\n").utf8))
        var out = try h.ssh(["add", "key", "--passphrase-file", "phrase"])
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.ssh(["list"])
        #expect(out.stdout == (try h.publicKey("key", passphrase: Self.phrase)) + " enc\n", "\(out.stderr)")
    }

    @Test(arguments: [["-t", "ed25519"], ["-t", "ed25519", "-Z", "aes256-gcm@openssh.com"], ["-t", "rsa", "-m", "PEM"]])
    func wrongPassphraseIsAuthFailed(_ options: [String]) throws {
        let h = try SSHKeyHome()
        try h.keygen("key", options, passphrase: Self.phrase)
        try h.write("phrase", Array("not it\n".utf8))
        let out = try h.ssh(["add", "key", "--passphrase-file", "phrase"])
        #expect(out.status == 51, "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: wrong passphrase for the key file"), "\(out.stderr)")
        #expect(try h.ssh(["list"]).stdout.isEmpty)
    }

    /// No passphrase file and no terminal: errSecInteractionNotAllowed (36) at once, with a hint.
    @Test func noTerminalNoFile() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"], passphrase: Self.phrase)
        let out = try h.ssh(["add", "key"])
        #expect(out.status == 36, "\(out.stderr)")
        #expect(
            out.stderr
                == "kc: the key file key is encrypted and there is no terminal to ask for its passphrase\nkc: hint: pass --passphrase-file FILE (its first line is the passphrase)\n"
        )
    }

    /// On a terminal the passphrase is asked for, with echo off; typed wrong, exit 51.
    @Test func typedOnATerminal() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519", "-Z", "aes256-gcm@openssh.com"], passphrase: Self.phrase, comment: "typed")
        var session = try h.pty(["add", "key"], answers: [["Passphrase for key: ", Self.phrase + "\n"]])
        #expect(session.status == 0, "\(session.screen)")
        #expect(!session.screen.contains(Self.phrase), "the passphrase is not echoed: \(session.screen)")
        #expect(try h.ssh(["list"]).stdout == (try h.publicKey("key", passphrase: Self.phrase)) + " typed\n")
        try h.keygen("other", ["-t", "ed25519"], passphrase: Self.phrase)
        session = try h.pty(["add", "other"], answers: [["Passphrase for other: ", "wrong\n"]])
        #expect(session.status == 51, "\(session.screen)")
    }

    /// PEM keys (`ssh-keygen -m PEM`, openssl's PKCS#8, encrypted PKCS#8) through libcrypto.
    @Test func pemKeys() throws {
        let h = try SSHKeyHome()
        try h.write("phrase", Array((Self.phrase + "\n").utf8))
        try h.keygen("rsa", ["-t", "rsa", "-m", "PEM"])
        try h.keygen("ec", ["-t", "ecdsa", "-m", "PEM"], passphrase: Self.phrase)
        try h.keygen("ec384", ["-t", "ecdsa", "-b", "384", "-m", "PKCS8"])
        try h.tool(["openssl", "genpkey", "-algorithm", "ed25519", "-out", "ed.pem"])
        try h.tool(["openssl", "pkcs8", "-topk8", "-in", "ed.pem", "-out", "ed-enc.pem", "-passout", "pass:" + Self.phrase])
        try h.tool(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa8.pem"])
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: h.directory + "/rsa")), as: UTF8.self).hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        for (file, name) in [("rsa", "r"), ("ec", "e"), ("ec384", "e384"), ("ed.pem", "ed"), ("ed-enc.pem", "ed2"), ("rsa8.pem", "r8")] {
            let out = try h.ssh(["add", file, "--name", name, "--passphrase-file", "phrase"])
            if file == "ed-enc.pem" {
                #expect(out.status == 45 && out.stderr.contains("already in"), "the same key as ed.pem: \(out.stderr)")
            } else {
                #expect(out.status == 0, "\(file): \(out.stderr)")
            }
        }
        let listed = SSHKeyHome.typeAndKey(try h.ssh(["list"]).stdout).split(separator: "\n").map(String.init)
        let expected = try ["rsa", "ec", "ec384", "rsa8.pem"].map { file in
            try h.publicKey(file, passphrase: file == "ec" ? Self.phrase : "")
        }
        // ssh-keygen does not read openssl's Ed25519 PKCS#8 file: that line is checked by its type.
        #expect(listed.count == 5 && listed[3].hasPrefix("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"), "\(listed)")
        #expect(listed.prefix(3) + listed.suffix(1) == expected[...], "\(listed)")
        try h.write("bad", Array("no\n".utf8))
        #expect(try h.ssh(["add", "ed-enc.pem", "--name", "x", "--passphrase-file", "bad"]).status == 51)
    }
}
