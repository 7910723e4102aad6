import Foundation
import KCTestSupport
import Testing

/// The whole promise of docs/ssh.md, as a user meets it: a key kept in kc (`kc ssh add
/// FILE`, `kc ssh generate`) in an unlocked keychain is listed by `ssh-add -L` through
/// `kc ssh-agent`, logs `ssh` in to a real sshd and signs with `ssh-keygen -Y sign`, with
/// the key file deleted and no other key anywhere; once `kc lock` runs, the agent lists it
/// no more and a login fails at once.
@Suite struct KeychainKeyLoginTests {
    /// Writes `line` (a public key line) to `name` in the home; returns its path.
    static func publicFile(_ h: SSHKeyHome, _ name: String, _ line: String) throws -> String {
        try h.write(name, Array((line + "\n").utf8), mode: 0o644)
    }

    /// Logs in to `sshd` with the key whose public half is `identity`; the output.
    static func login(_ f: SSHAgentFixture, _ sshd: LoopbackSSHD, _ identity: String, _ known: String) throws -> KCBinary.Output {
        try f.run(sshd.ssh(identity: identity, knownHosts: known, command: "echo logged-in-through-kc"), timeout: 90)
    }

    /// `ssh-keygen -Y sign` through the agent with the key `identity`, checked by
    /// `ssh-keygen -Y verify` against `line`; a changed message does not verify.
    static func signAndVerify(_ f: SSHAgentFixture, _ identity: String, _ line: String) throws {
        let message = f.folder + "/message"
        try Data("a message to sign\n".utf8).write(to: URL(fileURLWithPath: message))
        try? FileManager.default.removeItem(atPath: message + ".sig")
        let sign = try f.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", identity, message])
        #expect(sign.status == 0, "\(sign.stderr)")
        let signers = f.folder + "/allowed_signers"
        try Data("signer@example \(line)\n".utf8).write(to: URL(fileURLWithPath: signers))
        let verify = ["/usr/bin/ssh-keygen", "-Y", "verify", "-f", signers, "-I", "signer@example", "-n", "file", "-s", message + ".sig"]
        let good = try f.run(verify, stdin: try Data(contentsOf: URL(fileURLWithPath: message)))
        #expect(good.status == 0 && good.stdout.contains("Good \"file\" signature"), "\(good.stdout) \(good.stderr)")
        #expect(try f.run(verify, stdin: Data("another message\n".utf8)).status != 0)
    }

    @Test func aKeptKeyLogsInAndSignsUntilTheKeychainLocks() throws {
        let h = try SSHKeyHome()
        // Imported keys (the files deleted at once) and generated ones.
        try h.keygen("imported", ["-t", "ed25519"])
        try h.keygen("imported_rsa", ["-t", "rsa", "-b", "2048"])
        #expect(try h.ssh(["add", "imported", "--name", "laptop"]).status == 0)
        #expect(try h.ssh(["add", "imported_rsa", "--name", "old-rsa"]).status == 0)
        for name in ["imported", "imported.pub", "imported_rsa", "imported_rsa.pub"] {
            try FileManager.default.removeItem(atPath: h.directory + "/" + name)
        }
        var lines: [String: String] = [:]
        for (name, type) in [("made", "ed25519"), ("made-ecdsa", "ecdsa")] {
            let out = try h.ssh(["generate", name, "--type", type])
            #expect(out.status == 0, "\(out.stderr)")
            lines[name] = out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for name in ["laptop", "old-rsa"] {
            let out = try h.ssh(["export-public", name])
            #expect(out.status == 0, "\(out.stderr)")
            lines[name] = out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)

        let f = try SSHAgentFixture(home: h.home, throughKC: true)
        let listed = try f.run(["/usr/bin/ssh-add", "-L"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(Set(listed.stdout.split(separator: "\n").map(String.init)) == Set(lines.values), "\(listed.stdout)")

        let sshd = try LoopbackSSHD(folder: f.folder, keys: Array(lines.values))
        let known = f.folder + "/known_hosts"
        try Data((try sshd.knownHostsLine() + "\n").utf8).write(to: URL(fileURLWithPath: known))
        for (name, line) in lines.sorted(by: { $0.key < $1.key }) {
            let identity = try Self.publicFile(h, name + ".pub", line)
            let out = try Self.login(f, sshd, identity, known)
            #expect(out.status == 0 && out.stdout.contains("logged-in-through-kc"), "\(name): \(out.stderr)")
            try Self.signAndVerify(f, identity, line)
        }
        // No other key anywhere: the client's home has no ~/.ssh, the agent no ssh-add key.
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/.ssh"))

        // Locked: the next listing is empty and a login fails at once.
        #expect(try h.kc(["lock"]).status == 0)
        let after = try f.run(["/usr/bin/ssh-add", "-L"])
        #expect(!after.stdout.contains("laptop") && !after.stdout.contains("made"), "\(after.stdout)")
        let started = Date()
        let refused = try Self.login(f, sshd, h.directory + "/laptop.pub", known)
        #expect(refused.status == 255, "\(refused.stdout) \(refused.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// A team's deploy key (`-k team:NAME`) serves through `kc ssh-agent` while the team
    /// agent holds the team keychain, and no more once it is locked.
    @Test func aTeamKeySignsThroughTheAgent() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let h = try SSHKeyHome()
        #expect(try h.kc(["team", "create", "deploy", "--dsn", dsn, "--kdf", "interactive"], password: "team pw").status == 0)
        #expect(try h.kc(["unlock", "-k", "team:deploy"], password: "team pw").status == 0)
        let generated = try h.ssh(["generate", "ci-deploy", "-k", "team:deploy"], password: nil)
        #expect(generated.status == 0, "\(generated.stderr)")
        let line = generated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let identity = try Self.publicFile(h, "ci-deploy.pub", line)

        let f = try SSHAgentFixture(home: h.home, throughKC: true)
        #expect(try f.run(["/usr/bin/ssh-add", "-L"]).stdout == line + "\n")
        try Self.signAndVerify(f, identity, line)

        #expect(try h.kc(["lock", "-k", "team:deploy"]).status == 0)
        #expect(!(try f.run(["/usr/bin/ssh-add", "-L"]).stdout.contains("ci-deploy")))
        let message = f.folder + "/message"
        try FileManager.default.removeItem(atPath: message + ".sig")
        let refused = try f.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", identity, message])
        #expect(refused.status != 0 && !FileManager.default.fileExists(atPath: message + ".sig"), "\(refused.stderr)")
    }
}
