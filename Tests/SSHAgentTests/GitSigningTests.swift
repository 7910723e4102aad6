import Foundation
import KCTestSupport
import Testing

/// `git commit -S` with gpg.format=ssh signs through kc's SSH agent, and `git
/// verify-commit` accepts it with an allowed signers file.
@Suite struct GitSigningTests {
    @Test func gitSignsACommitThroughTheAgentAndVerifiesIt() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("git", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        try FileManager.default.removeItem(atPath: key)
        let repo = f.folder + "/repo"
        let signers = f.folder + "/allowed_signers"
        try Data("dev@example.com \(try f.publicLine(key))\n".utf8).write(to: URL(fileURLWithPath: signers))
        let env = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": f.folder + "/gitconfig"]
        func git(_ arguments: [String]) throws -> KCBinary.Output {
            try f.run(["/usr/bin/git", "-C", repo] + arguments, extra: env, timeout: 60)
        }
        #expect(try f.run(["/usr/bin/git", "init", "-q", repo], extra: env).status == 0)
        for (name, value) in [
            ("user.name", "Dev"), ("user.email", "dev@example.com"), ("gpg.format", "ssh"),
            ("user.signingkey", "key::" + (try f.publicLine(key))), ("gpg.ssh.allowedSignersFile", signers)
        ] {
            #expect(try git(["config", name, value]).status == 0)
        }
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: repo + "/file"))
        #expect(try git(["add", "file"]).status == 0)
        let commit = try git(["commit", "-q", "-S", "-m", "signed through kc"])
        #expect(commit.status == 0, "\(commit.stderr)")
        let verify = try git(["verify-commit", "HEAD"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stderr.contains("Good \"git\" signature for dev@example.com"))
        // An unsigned commit does not verify: the check can fail.
        #expect(try git(["commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "unsigned"]).status == 0)
        #expect(try git(["verify-commit", "HEAD"]).status != 0)
    }
}
