import Foundation
import KCTestSupport
import Testing

/// `ssh-add -x` locks kc's SSH agent: nothing is listed or signed until `ssh-add -X` gives
/// the same passphrase; a wrong one leaves it locked.
@Suite struct AgentLockTests {
    /// An askpass program that answers $LOCK_ANSWER (ssh-add reads the lock passphrase
    /// through askpass when it has no terminal).
    func askpass(_ f: SSHAgentFixture) throws -> [String: String] {
        let path = f.folder + "/askpass"
        try Data("#!/bin/sh\nprintf '%s\\n' \"$LOCK_ANSWER\"\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o700)
        return ["SSH_ASKPASS": path, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":9999"]
    }

    @Test func aLockedAgentServesNothingUntilTheRightPassphrase() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("locked", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        var env = try askpass(f)
        env["LOCK_ANSWER"] = "correct horse"
        let lock = try f.run(["/usr/bin/ssh-add", "-x"], extra: env)
        #expect(lock.status == 0, "\(lock.stderr)")
        // Locked: no identity, no signature.
        let listed = try f.sshAdd(["-l"])
        #expect(!listed.stdout.contains("locked"))
        #expect(try f.sshAdd(["-T", key + ".pub"]).status != 0)
        // A wrong passphrase: still locked.
        env["LOCK_ANSWER"] = "wrong horse"
        let wrong = try f.run(["/usr/bin/ssh-add", "-X"], extra: env)
        #expect(wrong.status != 0)
        #expect(!(try f.sshAdd(["-l"]).stdout.contains("locked")))
        // The right one: served again.
        env["LOCK_ANSWER"] = "correct horse"
        let unlock = try f.run(["/usr/bin/ssh-add", "-X"], extra: env)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(try f.sshAdd(["-l"]).stdout.contains("locked"))
        #expect(try f.sshAdd(["-T", key + ".pub"]).status == 0)
    }
}
