import Foundation
import KCTestSupport
import Testing

/// Debian's ssh-add against kc's SSH agent: keys of every type added, listed, expired,
/// confirmed, removed, as with OpenSSH's own agent.
@Suite struct SSHAddTests {
    @Test func anEmptyAgentListsNothing() throws {
        let f = try SSHAgentFixture()
        let out = try f.sshAdd(["-l"])
        #expect(out.status == 1, "\(out.stderr)")
        #expect(out.stdout.contains("The agent has no identities."))
    }

    @Test(arguments: [("ed25519", nil), ("ecdsa", 256), ("ecdsa", 384), ("rsa", 3072)] as [(String, Int?)])
    func aFileKeyOfEachTypeIsAddedListedAndSigns(type: String, bits: Int?) throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("id_\(type)\(bits ?? 0)", type: type, bits: bits)
        let add = try f.sshAdd([key])
        #expect(add.status == 0, "\(add.stderr)")
        // -l prints what ssh-keygen -l prints for the file.
        let listed = try f.sshAdd(["-l"])
        let expected = try f.run(["/usr/bin/ssh-keygen", "-l", "-f", key + ".pub"])
        #expect(listed.status == 0)
        #expect(listed.stdout == expected.stdout, "\(listed.stdout) vs \(expected.stdout)")
        // -L prints the public key line.
        let listedPublic = try f.sshAdd(["-L"])
        #expect(listedPublic.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == (try f.publicLine(key)))
        // ssh-add -T signs with the key through the agent and checks the signature. For RSA
        // it asks for an ssh-rsa (SHA-1) signature, which kc refuses (SSHKeygenSignTests
        // signs with rsa-sha2-512 through ssh-keygen).
        let test = try f.sshAdd(["-T", key + ".pub"])
        if type == "rsa" {
            #expect(test.status != 0)
        } else {
            #expect(test.status == 0, "\(test.stderr)")
        }
    }

    @Test func dRemovesOneKeyAndDRemovesAll() throws {
        let f = try SSHAgentFixture()
        let a = try f.makeKey("a", type: "ed25519")
        let b = try f.makeKey("b", type: "ecdsa", bits: 256)
        #expect(try f.sshAdd([a]).status == 0)
        #expect(try f.sshAdd([b]).status == 0)
        #expect(try f.sshAdd(["-l"]).stdout.split(separator: "\n").count == 2)
        let d = try f.sshAdd(["-d", a])
        #expect(d.status == 0, "\(d.stderr)")
        let after = try f.sshAdd(["-L"]).stdout
        #expect(!after.contains(try f.publicLine(a).split(separator: " ")[1]))
        #expect(after.contains(try f.publicLine(b).split(separator: " ")[1]))
        let all = try f.sshAdd(["-D"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(try f.sshAdd(["-l"]).stdout.contains("The agent has no identities."))
    }

    @Test func aLifetimeExpiresTheKey() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("short", type: "ed25519")
        #expect(try f.sshAdd(["-t", "2", key]).status == 0)
        #expect(try f.sshAdd(["-l"]).stdout.contains("short"))
        usleep(3_000_000)
        let after = try f.sshAdd(["-l"])
        #expect(after.status == 1)
        #expect(!after.stdout.contains("short"))
        #expect(try f.sshAdd(["-T", key + ".pub"]).status != 0)
    }

    @Test func aConfirmKeyIsRefusedAtOnceWhenNobodyCanAnswer() throws {
        let f = try SSHAgentFixture()   // no DISPLAY, no askpass: nobody to ask
        let key = try f.makeKey("confirm", type: "ed25519")
        #expect(try f.sshAdd(["-c", key]).status == 0)
        #expect(try f.sshAdd(["-l"]).stdout.contains("confirm"))
        let started = Date()
        let test = try f.sshAdd(["-T", key + ".pub"])
        #expect(test.status != 0)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func aKeyAddedUnderAnotherAgentIsNotInThisOne() throws {
        // Two fixtures, two folders: each agent holds its own keys only.
        let f = try SSHAgentFixture()
        let g = try SSHAgentFixture()
        let key = try f.makeKey("mine", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        #expect(try g.sshAdd(["-l"]).stdout.contains("The agent has no identities."))
    }
}
