import Foundation
import KCTestSupport
import Testing

/// `kc ssh add` of keys ssh-keygen made, of every type kc keeps: `kc ssh list` prints what
/// `ssh-keygen -y` derives from the file (the same type and key), with the key's name.
@Suite struct SSHKeyImportTests {
    static let types: [[String]] = [
        ["-t", "ed25519"], ["-t", "ecdsa", "-b", "256"], ["-t", "ecdsa", "-b", "384"], ["-t", "ecdsa", "-b", "521"],
        ["-t", "rsa", "-b", "2048"], ["-t", "rsa", "-b", "3072"]
    ]

    @Test(arguments: SSHKeyImportTests.types)
    func listEqualsSSHKeygen(_ type: [String]) throws {
        let h = try SSHKeyHome()
        try h.keygen("key", type, comment: "me@laptop")
        var out = try h.ssh(["add", "key"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("added the") && out.stderr.contains("me@laptop"), "\(out.stderr)")
        out = try h.ssh(["list"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == (try h.publicKey("key")) + " me@laptop\n", "ssh-add -L's format: TYPE BASE64 COMMENT")
        let expected = try h.publicKey("key") + " me@laptop\n"
        out = try h.ssh(["export-public", "me@laptop"])
        #expect(out.status == 0 && out.stdout == expected, "\(out.stderr)")
    }

    /// Several keys: one line each, in the order they were added; --name names them.
    @Test func severalKeysAndNames() throws {
        let h = try SSHKeyHome()
        try h.keygen("a", ["-t", "ed25519"])
        try h.keygen("b", ["-t", "ecdsa"])
        #expect(try h.ssh(["add", "a", "--name", "github"]).status == 0)
        #expect(try h.ssh(["add", "b", "--name", "deploy"]).status == 0)
        let out = try h.ssh(["list"])
        #expect(out.stdout == (try h.publicKey("a")) + " github\n" + (try h.publicKey("b")) + " deploy\n", "\(out.stderr)")
        // The same key again, or another key under a name taken: errSecDuplicateItem (45).
        var again = try h.ssh(["add", "a", "--name", "other"])
        #expect(again.status == 45 && again.stderr.contains("already in") && again.stderr.contains("github"), "\(again.stderr)")
        try h.keygen("c", ["-t", "ed25519"])
        again = try h.ssh(["add", "c", "--name", "github"])
        #expect(again.status == 45 && again.stderr.contains("kc: hint: choose another with --name"), "\(again.stderr)")
        #expect(try h.ssh(["export-public", "nope"]).status == 44)
    }

    /// An RSA key under 2048 bits is refused (errSecParam, 206) and nothing is stored.
    @Test func smallRSARefused() throws {
        let h = try SSHKeyHome()
        try h.keygen("small", ["-t", "rsa", "-b", "1024"])
        let out = try h.ssh(["add", "small"])
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("1024 bits") && out.stderr.contains("2048"), "\(out.stderr)")
        #expect(try h.ssh(["list"]).stdout.isEmpty)
    }

    /// `kc find` shows the key items (class key, label NAME) without their secret.
    @Test func kcFindShowsThem() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"], comment: "laptop")
        #expect(try h.ssh(["add", "key"]).status == 0)
        let out = try h.kc(["find", "--class", "key", "-l", "laptop"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("laptop") && out.stdout.contains("ssh:SHA256:"), "\(out.stdout)")
    }
}
