import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport
import Testing

/// Raw messages on kc's SSH agent socket: what a client that is not OpenSSH may send.
@Suite struct AgentProtocolTests {
    @Test func anUnknownMessageTypeIsAnsweredWithFailure() throws {
        let f = try SSHAgentFixture()
        for type: UInt8 in [0, 1, 20, 21, 26, 99, 200, 255] {
            #expect(try f.exchange([type]) == [5], "type \(type)")
        }
        // The connection stays usable after a failure: the next request is answered.
        let c = try #require(try UnixSocket.connect(to: f.socket))
        #expect(try f.exchange([99], on: c) == [5])
        #expect(try f.exchange([11], on: c) == [12, 0, 0, 0, 0])
    }

    @Test func malformedRequestsAreAnsweredWithFailure() throws {
        let f = try SSHAgentFixture()
        // A sign request whose key string runs past the end; an add of an unknown key type;
        // a remove with trailing bytes; a lock with a truncated string.
        #expect(try f.exchange([13, 0, 0, 0, 200, 1, 2]) == [5])
        #expect(try f.exchange([17] + Wire.string("ssh-dss") + Wire.string([1, 2, 3])) == [5])
        #expect(try f.exchange([18] + Wire.string([1]) + [0]) == [5])
        #expect(try f.exchange([22, 0, 0]) == [5])
    }

    @Test func queryNamesTheExtensionsAndAnUnknownOneFails() throws {
        let f = try SSHAgentFixture()
        let reply = try #require(try f.exchange([27] + Wire.string("query")))
        #expect(reply.first == 29)
        #expect(Array(reply.dropFirst()) == Wire.string("query") + Wire.string("query") + Wire.string("session-bind@openssh.com"))
        #expect(try f.exchange([27] + Wire.string("no-such@example.com")) == [28])
    }

    @Test func aSessionBindWithABadSignatureIsRefused() throws {
        let f = try SSHAgentFixture()
        let host = try f.makeKey("host", type: "ed25519")
        let blob = try f.publicBlob(host)
        let sessionID = [UInt8](repeating: 9, count: 32)
        let forged = Wire.string("ssh-ed25519") + Wire.string([UInt8](repeating: 1, count: 64))
        let bind = [27] + Wire.string("session-bind@openssh.com") + Wire.string(blob) + Wire.string(sessionID) + Wire.string(forged) + [0]
        #expect(try f.exchange(bind) == [5])
        // A signature by another key than the one named: refused too.
        let other = Wire.string("ssh-ed25519") + Wire.string([UInt8](repeating: 0, count: 64))
        #expect(try f.exchange([27] + Wire.string("session-bind@openssh.com") + Wire.string(blob) + Wire.string(sessionID) + Wire.string(other) + [0]) == [5])
    }

    @Test func aMessageOverTheSizeCapClosesTheConnection() throws {
        let f = try SSHAgentFixture()
        let c = try #require(try UnixSocket.connect(to: f.socket))
        // 256 KiB + 1, announced: the agent closes without reading it.
        try c.writeAll(Wire.uint32(256 * 1024 + 1) + [11], until: .after(seconds: 5))
        var byte = [UInt8](repeating: 0, count: 1)
        // Closed (end of file, or a reset: the agent left the rest unread), not merely
        // silent until the deadline.
        let error = #expect(throws: KeychainError.self) {
            try byte.withUnsafeMutableBytes { try c.readExactly(1, into: $0, until: .after(seconds: 10)) }
        }
        #expect(error != nil && error?.message.contains("timed out") == false, "\(String(describing: error))")
    }

    @Test func anRSASignatureWithSHA1IsRefused() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("rsa", type: "rsa", bits: 2048)
        #expect(try f.sshAdd([key]).status == 0)
        let blob = try f.publicBlob(key)
        let data = Array("data to sign".utf8)
        // flags 0: ssh-rsa, a SHA-1 signature.
        #expect(try f.exchange([13] + Wire.string(blob) + Wire.string(data) + Wire.uint32(0)) == [5])
        // flags 2 and 4: rsa-sha2-256 and rsa-sha2-512 are made.
        for (flag, name) in [(UInt32(2), "rsa-sha2-256"), (4, "rsa-sha2-512")] {
            let reply = try #require(try f.exchange([13] + Wire.string(blob) + Wire.string(data) + Wire.uint32(flag)))
            #expect(reply.first == 14)
            #expect(reply.count > 9 && Array(reply[9..<(9 + name.utf8.count)]) == Array(name.utf8))
        }
    }

    @Test func aSilentClientDoesNotBlockOthers() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("busy", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        // Two clients that say nothing, one that sent half a message.
        let silent = try #require(try UnixSocket.connect(to: f.socket))
        let silent2 = try #require(try UnixSocket.connect(to: f.socket))
        let half = try #require(try UnixSocket.connect(to: f.socket))
        try half.writeAll(Wire.uint32(100) + [13, 0], until: .after(seconds: 5))
        let started = Date()
        for _ in 0..<3 {
            let out = try f.sshAdd(["-T", key + ".pub"])
            #expect(out.status == 0, "\(out.stderr)")
        }
        #expect(Date().timeIntervalSince(started) < 20)
        _ = (silent, silent2)
    }

    @Test func aPeerOfAnotherUIDIsRefused() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("theirs", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        // Let the other account reach the socket (the folder is 0700): only the uid check
        // stands between it and the key.
        chmod(f.folder, 0o711)
        chmod(f.agentDirectory, 0o711)
        chmod(f.socket, 0o666)
        let out = try Spawn.run(
            OtherUser.setpriv + ["/usr/bin/ssh-add", "-L"],
            environment: ["PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": f.socket, "HOME": "/tmp"], timeout: 30)
        #expect(out.status != 0)
        #expect(!out.stdout.contains("ssh-ed25519"))
        // The same request as this user is answered: the refusal was the uid's.
        #expect(try f.sshAdd(["-L"]).stdout.contains("ssh-ed25519"))
    }
}
