import Foundation
import KCTestSupport
import Testing

/// `ssh` to a real sshd on the loopback, authenticating with a key only kc's SSH agent
/// holds; a destination-constrained key (`ssh-add -h`) signs only for its host's key.
@Suite struct SSHLoginTests {
    @Test func sshLogsInWithAKeyOnlyTheAgentHolds() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("login", type: "ed25519")
        let sshd = try LoopbackSSHD(folder: f.folder, keys: [try f.publicLine(key)])
        #expect(try f.sshAdd([key]).status == 0)
        try FileManager.default.removeItem(atPath: key)   // only key.pub is left
        let known = f.folder + "/known_hosts"
        try Data((try sshd.knownHostsLine() + "\n").utf8).write(to: URL(fileURLWithPath: known))
        let out = try f.run(sshd.ssh(identity: key + ".pub", knownHosts: known, command: "echo logged-in-through-kc"), timeout: 90)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("logged-in-through-kc"))
        // Without the key in the agent, the same login fails: the agent made it work.
        #expect(try f.sshAdd(["-D"]).status == 0)
        let refused = try f.run(sshd.ssh(identity: key + ".pub", knownHosts: known, command: "true"), timeout: 90)
        #expect(refused.status == 255)
    }

    @Test func aDestinationConstrainedKeySignsOnlyForItsHost() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("constrained", type: "ed25519")
        let sshd = try LoopbackSSHD(folder: f.folder, keys: [try f.publicLine(key)])
        let known = f.folder + "/known_hosts"
        try Data((try sshd.knownHostsLine() + "\n").utf8).write(to: URL(fileURLWithPath: known))
        // Another host's key, under another name.
        let other = try f.makeKey("other_host", type: "ed25519")
        let otherKnown = f.folder + "/other_known_hosts"
        try Data("other-host \(try f.publicLine(other))\n".utf8).write(to: URL(fileURLWithPath: otherKnown))

        // Constrained to the other host: this sshd's host key is not permitted.
        let add = try f.sshAdd(["-H", otherKnown, "-h", "other-host", key])
        #expect(add.status == 0, "\(add.stderr)")
        let refused = try f.run(sshd.ssh(identity: key + ".pub", knownHosts: known, command: "true"), timeout: 90)
        #expect(refused.status == 255, "\(refused.stdout) \(refused.stderr)")
        // Nor does it sign anything on a connection bound to no session (ssh-keygen -Y).
        let message = f.folder + "/m"
        try Data("m".utf8).write(to: URL(fileURLWithPath: message))
        #expect(try f.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", key + ".pub", message]).status != 0)

        // Constrained to this host (its key, as known_hosts names it): the login works.
        #expect(try f.sshAdd(["-D"]).status == 0)
        let again = try f.sshAdd(["-H", known, "-h", LoopbackSSHD.alias, key])
        #expect(again.status == 0, "\(again.stderr)")
        let out = try f.run(sshd.ssh(identity: key + ".pub", knownHosts: known, command: "echo constrained-ok"), timeout: 90)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("constrained-ok"))
    }
}
