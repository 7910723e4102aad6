import Foundation
import KCTestSupport
import Testing

/// `ssh-keygen -Y sign` with a key held only by kc's SSH agent, verified by
/// `ssh-keygen -Y verify` with an allowed signers file.
@Suite struct SSHKeygenSignTests {
    @Test(arguments: [("ed25519", nil), ("ecdsa", 384), ("rsa", 2048)] as [(String, Int?)])
    func aSignatureMadeThroughTheAgentVerifies(type: String, bits: Int?) throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("signer", type: type, bits: bits)
        #expect(try f.sshAdd([key]).status == 0)
        // Only the public half is left: the private key is the agent's alone.
        try FileManager.default.removeItem(atPath: key)
        let message = f.folder + "/message"
        try Data("a message to sign\n".utf8).write(to: URL(fileURLWithPath: message))
        let sign = try f.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", key + ".pub", message])
        #expect(sign.status == 0, "\(sign.stderr)")
        let signers = f.folder + "/allowed_signers"
        try Data("signer@example \(try f.publicLine(key))\n".utf8).write(to: URL(fileURLWithPath: signers))
        let verify = try f.run(
            ["/usr/bin/ssh-keygen", "-Y", "verify", "-f", signers, "-I", "signer@example", "-n", "file", "-s", message + ".sig"],
            stdin: try Data(contentsOf: URL(fileURLWithPath: message)))
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stdout.contains("Good \"file\" signature for signer@example"))
        // A changed message does not verify: the check can fail.
        let forged = try f.run(
            ["/usr/bin/ssh-keygen", "-Y", "verify", "-f", signers, "-I", "signer@example", "-n", "file", "-s", message + ".sig"],
            stdin: Data("another message\n".utf8))
        #expect(forged.status != 0)
    }
}
