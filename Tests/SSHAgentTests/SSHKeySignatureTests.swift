import CSodium
import Foundation
import KCTestSupport
import KeychainCore
import Testing

@testable import SSHAgent

/// The private wire form kc keeps is a working key: a key `kc ssh generate` made is read
/// back through the agent (`KeychainIdentities`, as the SSH agent reads it), signs with the
/// SSH agent's signer (`SigningKey`) in OpenSSH's SSHSIG format, and
/// `ssh-keygen -Y verify` accepts the signature against the exported public key; a
/// signature of other bytes is refused, so the check can fail.
@Suite struct SSHKeySignatureTests {
    static let namespace = "file"

    @Test(arguments: [
        ["--type", "ed25519"], ["--type", "ecdsa"], ["--type", "ecdsa", "--bits", "384"], ["--type", "ecdsa", "--bits", "521"],
        ["--type", "rsa", "--bits", "2048"]
    ])
    func generatedKeySignsAndSSHKeygenVerifies(_ options: [String]) throws {
        let h = try SSHKeyHome()
        let generated = try h.ssh(["generate", "signer"] + options)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let source = KeychainIdentitiesTests.source(h)
        guard let identity = try source.identities().first, var wire = try source.privateKey(for: identity.blob) else {
            Issue.record("the generated key is not served")
            return
        }
        defer { Sodium.wipe(&wire) }
        let key = try SSHPrivateKey(wire: wire)
        let message = Array("the message signed\n".utf8)
        try h.write("message", message)
        try h.write("other", Array("another message\n".utf8))
        try h.write("allowed", Array(("signer@kc " + generated.stdout.split(separator: " ").prefix(2).joined(separator: " ") + "\n").utf8))
        try h.write("message.sig", Array(try Self.sshsig(key, message).utf8))
        let verify = ["ssh-keygen", "-Y", "verify", "-f", "allowed", "-I", "signer@kc", "-n", Self.namespace, "-s", "message.sig"]
        let good = try Spawn.run(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\" < message", h.directory] + verify, environment: ["PATH": "/usr/bin:/bin"])
        #expect(good.status == 0 && good.stdout.contains("Good \"file\" signature for signer@kc"), "\(good.stdout)\(good.stderr)")
        let bad = try Spawn.run(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\" < other", h.directory] + verify, environment: ["PATH": "/usr/bin:/bin"])
        #expect(bad.status != 0, "\(bad.stdout)")
    }

    /// An armoured SSHSIG signature (OpenSSH PROTOCOL.sshsig) of `message` with SHA-512.
    static func sshsig(_ key: SSHPrivateKey, _ message: [UInt8]) throws -> String {
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512(&digest, message, UInt64(message.count))
        var signed = SSHWireWriter()
        signed.raw(Array("SSHSIG".utf8))
        signed.string(namespace)
        signed.string("")
        signed.string("sha512")
        signed.string(digest)
        var blob = SSHWireWriter()
        blob.raw(Array("SSHSIG".utf8))
        blob.uint32(1)
        blob.string(key.publicBlob)
        blob.string(namespace)
        blob.string("")
        blob.string("sha512")
        // kc's one signer, the SSH agent's (RSA: rsa-sha2-512).
        blob.string(try SigningKey(wire: key.wire).sign(signed.bytes, flags: SSHAgentMessage.rsaSHA512))
        return "-----BEGIN SSH SIGNATURE-----\n" + Data(blob.bytes).base64EncodedString(options: .lineLength64Characters) + "\n-----END SSH SIGNATURE-----\n"
    }
}
