import Foundation
import KCTestSupport
import KeychainCore
import SSHAgent
import Testing

/// Where an SSH key kc keeps ends up: sealed in the keychain file (no private byte in
/// clear), behind the keychain's lock (a locked keychain fails at once without a terminal,
/// asks for its password on one).
@Suite struct SSHKeyStorageTests {
    /// The private fields of a wire form (everything after the public ones), as 16-byte
    /// windows: none may appear in the keychain file.
    static func privateWindows(_ key: SSHPrivateKey) throws -> [[UInt8]] {
        var r = SSHWireReader(key.wire)
        _ = try r.string()
        switch key.type {
        case .ed25519: _ = try r.string()
        case .rsa: _ = try r.string(); _ = try r.string()
        default: _ = try r.string(); _ = try r.string()
        }
        var secret = Array(key.wire[r.offset...])
        if key.type == .ed25519 { secret = Array(secret[4..<36]) }   // the seed k
        return stride(from: 0, to: secret.count - 16, by: 8).map { Array(secret[$0..<($0 + 16)]) }
    }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= hay.count else { return false }
        return (0...(hay.count - needle.count)).contains { i in hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle }
    }

    @Test(arguments: [["-t", "ed25519"], ["-t", "rsa", "-b", "2048"], ["-t", "ecdsa"]])
    func keychainFileHoldsNoPrivateBytesInClear(_ options: [String]) throws {
        let h = try SSHKeyHome()
        try h.keygen("key", options)
        let contents = Array(try Data(contentsOf: URL(fileURLWithPath: h.directory + "/key")))
        var (key, _) = try SSHKeyFile(contents).privateKey(passphrase: nil)
        defer { key.wipe() }
        #expect(try h.ssh(["add", "key", "--name", "sealed"]).status == 0)
        let windows = try Self.privateWindows(key)
        #expect(!windows.isEmpty)
        var files = [h.home.defaultKeychain]
        for suffix in ["-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: h.home.defaultKeychain + suffix) {
            files.append(h.home.defaultKeychain + suffix)
        }
        for file in files {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(!windows.contains { Self.contains(bytes, $0) }, "private key bytes in clear in \(file)")
            #expect(!Self.contains(bytes, Array("sealed".utf8)), "the label is sealed too")
        }
        // The check itself finds what it looks for: the wire form the item seals holds them.
        #expect(windows.allSatisfy { Self.contains(key.wire, $0) })
    }

    /// Locked, no terminal, no KC_PASSWORD: exit 36 at once, one line naming `kc unlock`.
    @Test func lockedKeychainWithoutTerminal() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"])
        for arguments in [["add", "key"], ["list"], ["generate", "g"], ["export-public", "x"]] {
            let out = try h.ssh(arguments, password: nil)
            #expect(out.status == 36, "\(arguments): \(out.stderr)")
            #expect(out.stderr == "kc: the keychain \(h.home.defaultKeychain) is locked: unlock it with `kc unlock`\n", "\(out.stderr)")
        }
        // -k names it in the hint.
        let out = try h.ssh(["list", "-k", "login"], password: nil)
        #expect(out.stderr.contains("`kc unlock -k login`"), "\(out.stderr)")
    }

    /// Unlocked in the agent, no password is needed; on a terminal a locked keychain's
    /// password is asked for.
    @Test func agentOrTerminal() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"], comment: "k")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var out = try h.ssh(["add", "key"], password: nil)
        #expect(out.status == 0, "through the agent: \(out.stderr)")
        #expect(try h.kc(["lock"]).status == 0)
        let session = try h.pty(["list"], answers: [["Password for keychain", KCHome.password + "\n"]], password: nil)
        #expect(session.status == 0 && session.screen.contains("ssh-ed25519 AAAA"), "\(session.screen)")
        out = try h.ssh(["list"], password: "wrong")
        #expect(out.status == 51, "\(out.stderr)")
    }
}
