import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport
import Testing

/// What happens while, and after, the askpass question is open: a LOCK, `ssh-add -D` or the
/// key's expiry during the question means no signature; and only an empty answer or "yes"
/// with exit 0 is a yes (as OpenSSH's agent reads it).
@Suite struct ConfirmationRecheckTests {
    /// An askpass program that waits `delay` seconds, prints `say` and exits `status`.
    static func askpass(delay: Int, say: String, status: Int = 0) throws -> String {
        let folder = NSTemporaryDirectory() + "/kc-askpass2-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/askpass"
        let script = "#!/bin/sh\nsleep \(delay)\nprintf '%s\\n' '\(say)'\nexit \(status)\n"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o700)
        return path
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] { Wire.uint32(UInt32(payload.count)) + payload }

    static func reply(_ c: UnixSocket, seconds: Double = 20) throws -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 4)
        try header.withUnsafeMutableBytes { try c.readExactly(4, into: $0, until: .after(seconds: seconds)) }
        let count = header.reduce(0) { $0 << 8 | Int($1) }
        var body = [UInt8](repeating: 0, count: count)
        try body.withUnsafeMutableBytes { try c.readExactly(count, into: $0, until: .after(seconds: 10)) }
        return body
    }

    static func signRequest(_ blob: [UInt8]) -> [UInt8] { [13] + Wire.string(blob) + Wire.string(Array("data".utf8)) + Wire.uint32(0) }

    /// Starts a signature that asks (3 s), runs `meanwhile` during the question, and returns
    /// the agent's answer to the signature.
    static func signWhile(_ add: [String], meanwhile: (SSHAgentFixture) throws -> Void) throws -> UInt8? {
        let askpass = try Self.askpass(delay: 3, say: "yes")
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: askpass).deletingLastPathComponent().path) }
        let f = try SSHAgentFixture(extra: ["DISPLAY": ":99", "SSH_ASKPASS": askpass])
        let key = try f.makeKey("asked", type: "ed25519")
        #expect(try f.sshAdd(add + [key]).status == 0)
        let c = try #require(try UnixSocket.connect(to: f.socket))
        try c.writeAll(frame(signRequest(try f.publicBlob(key))), until: .after(seconds: 10))
        usleep(1_000_000)   // the question is open
        try meanwhile(f)
        return try reply(c).first
    }

    @Test func removingAllKeysDuringTheQuestionMeansNoSignature() throws {
        let answer = try Self.signWhile(["-c"]) { (f: SSHAgentFixture) throws in
            let removed = try f.sshAdd(["-D"])
            #expect(removed.status == 0)
        }
        #expect(answer == 5)
    }

    @Test func lockingDuringTheQuestionMeansNoSignature() throws {
        let answer = try Self.signWhile(["-c"]) { (f: SSHAgentFixture) throws in
            let locked = try f.exchange([22] + Wire.string("lock-passphrase"))
            #expect(locked == [6])
        }
        #expect(answer == 5)
    }

    @Test func aKeyExpiringDuringTheQuestionSignsNothing() throws {
        let answer = try Self.signWhile(["-c", "-t", "2"]) { _ in }
        #expect(answer == 5)
    }

    @Test func theSameQuestionUndisturbedSigns() throws {
        #expect(try Self.signWhile(["-c"]) { _ in } == 14)
    }

    @Test func onlyAnEmptyAnswerOrYesWithExitZeroIsAYes() throws {
        for (say, status, yes) in [("yes", 0, true), ("", 0, true), ("YES", 0, true), ("no", 0, false), ("yes", 1, false), ("ok", 0, false)] {
            let askpass = try Self.askpass(delay: 0, say: say, status: status)
            defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: askpass).deletingLastPathComponent().path) }
            let f = try SSHAgentFixture(extra: ["DISPLAY": ":99", "SSH_ASKPASS": askpass])
            let key = try f.makeKey("asked", type: "ed25519")
            #expect(try f.sshAdd(["-c", key]).status == 0)
            let answer = try f.exchange(Self.signRequest(try f.publicBlob(key)))?.first
            #expect(answer == (yes ? 14 : 5), "askpass printed '\(say)' and exited \(status)")
        }
    }
}
