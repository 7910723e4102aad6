import Foundation
import KCTestSupport
import Testing

/// `kc ssh generate`: the key is made inside kc and only its public half is printed;
/// ssh-keygen reads the exported public key as a key of the type and size asked for.
@Suite struct SSHKeyGenerationTests {
    @Test(arguments: [
        ([String](), "256", "(ED25519)"), (["--type", "ecdsa"], "256", "(ECDSA)"), (["--type", "ecdsa", "--bits", "384"], "384", "(ECDSA)"),
        (["--type", "ecdsa", "--bits", "521"], "521", "(ECDSA)"), (["--type", "rsa"], "3072", "(RSA)"), (["--type", "rsa", "--bits", "2048"], "2048", "(RSA)")
    ])
    func generatedKeysAreWhatSSHKeygenReads(_ options: [String], _ bits: String, _ type: String) throws {
        let h = try SSHKeyHome()
        var out = try h.ssh(["generate", "deploy"] + options)
        #expect(out.status == 0, "\(out.stderr)")
        let printed = out.stdout
        out = try h.ssh(["export-public", "deploy"])
        #expect(out.stdout == printed && out.stdout.hasSuffix(" deploy\n"), "\(out.stderr)")
        try h.write("deploy.pub", Array(out.stdout.utf8))
        let fingerprint = try h.tool(["ssh-keygen", "-l", "-f", "deploy.pub"]).stdout
        #expect(fingerprint.hasPrefix(bits + " SHA256:") && fingerprint.hasSuffix(" deploy \(type)\n"), "\(fingerprint)")
        #expect(try h.ssh(["list"]).stdout == printed)
    }

    /// Two generated keys differ; a name taken is refused before a key is made.
    @Test func keysDifferAndNamesAreUnique() throws {
        let h = try SSHKeyHome()
        let a = try h.ssh(["generate", "a"]).stdout
        let b = try h.ssh(["generate", "b"]).stdout
        #expect(!a.isEmpty && SSHKeyHome.typeAndKey(a) != SSHKeyHome.typeAndKey(b))
        let again = try h.ssh(["generate", "a"])
        #expect(again.status == 45, "\(again.stderr)")
    }

    @Test(arguments: [
        (["--type", "dsa"], "--type takes ed25519, ecdsa or rsa"), (["--type", "rsa", "--bits", "1024"], "--bits takes 2048 to 16384"),
        (["--type", "ecdsa", "--bits", "512"], "--bits for ecdsa is 256, 384 or 521"), (["--bogus"], "unknown option '--bogus'")
    ])
    func badOptions(_ options: [String], _ message: String) throws {
        let h = try SSHKeyHome()
        let out = try h.ssh(["generate", "k"] + options)
        #expect(out.status == 2 || out.status == 206, "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: " + message), "\(out.stderr)")
        #expect(try h.ssh(["list"]).stdout.isEmpty)
    }
}
