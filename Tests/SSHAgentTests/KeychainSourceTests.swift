import Foundation
import KCTestSupport
import POSIXSupport
import SSHAgent
import Synchronization
import Testing

/// A source over one key, "locked" (it throws, as a locked keychain's source does) or not.
final class SourceOfOneKey: SSHIdentitySource {
    let wire: [UInt8]
    let blob: [UInt8]
    let presence: Bool
    let locked = Mutex(false)
    init(wire: [UInt8], blob: [UInt8], presence: Bool) {
        self.wire = wire
        self.blob = blob
        self.presence = presence
    }
    struct Locked: Error {}
    func identities() throws -> [SSHPublicIdentity] {
        if locked.withLock({ $0 }) { throw Locked() }
        return [SSHPublicIdentity(blob: blob, comment: "keychain key")]
    }
    func privateKey(for blob: [UInt8]) throws -> [UInt8]? {
        if locked.withLock({ $0 }) { throw Locked() }
        return blob == self.blob ? wire : nil
    }
    func requiresPresence(for blob: [UInt8]) throws -> Bool { presence }
}

/// A server on its own socket in this process, serving until the value goes.
final class InProcessSSHAgent {
    let socket: String
    private final class Flags: Sendable {
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
    }
    private let flags = Flags()
    init(folder: String, source: SourceOfOneKey) throws {
        socket = folder + "/ssh-agent.sock"
        let listener = try UnixSocket.listen(at: socket)
        let server = SSHAgentServer(directory: folder, sources: { [source] }, confirmation: .nobody)
        nonisolated(unsafe) let owned = listener
        let flags = self.flags
        Thread.detachNewThread {
            server.serve(owned) { flags.stop.load(ordering: .relaxed) }
            flags.done.store(true, ordering: .relaxed)
        }
    }
    deinit {
        flags.stop.store(true, ordering: .relaxed)
        while !flags.done.load(ordering: .relaxed) { usleep(10_000) }
    }
}

/// The agent's side of the seam with the keychains (`SSHIdentitySource`): a source's keys
/// are served after ssh-add's, asked again on every request (a keychain that locks stops
/// serving at once), and a key that requires presence is refused at once where nobody can
/// confirm. The source here holds a real key file's private wire form, as a keychain's
/// key item gives it; the server, socket and clients (Debian's ssh-add, ssh-keygen) are real.
@Suite struct KeychainSourceTests {
    /// The private wire form of an unencrypted Ed25519 key file (openssh-key-v1: the
    /// private section after its two check words, up to the comment).
    static func wireForm(ofKeyFile path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let data = try #require(Data(base64Encoded: body))
        let magic = Array("openssh-key-v1\0".utf8)
        var reader = SSHReader(Array(data.dropFirst(magic.count)))
        #expect(try reader.text() == "none")
        _ = try reader.string()   // kdf
        _ = try reader.string()   // kdf options
        #expect(try reader.uint32() == 1)
        _ = try reader.string()   // public key
        var section = SSHReader(try reader.string())
        _ = try section.uint32()
        _ = try section.uint32()
        let start = section.offset
        _ = try section.string()   // type
        _ = try section.string()   // A
        _ = try section.string()   // k || A
        return Array(section.bytes[start..<section.offset])
    }

    func setUp(presence: Bool) throws -> (SSHAgentFixture, SourceOfOneKey, InProcessSSHAgent, String) {
        let f = try SSHAgentFixture()   // for its folder and key helpers; its own agent is unused
        let key = try f.makeKey("kept", type: "ed25519")
        let source = SourceOfOneKey(wire: try Self.wireForm(ofKeyFile: key), blob: try f.publicBlob(key), presence: presence)
        try FileManager.default.createDirectory(atPath: f.folder + "/inproc", withIntermediateDirectories: true)
        chmod(f.folder + "/inproc", 0o700)
        return (f, source, try InProcessSSHAgent(folder: f.folder + "/inproc", source: source), key)
    }

    @Test func aKeychainKeyIsServedUntilItsKeychainLocks() throws {
        let (f, source, agent, key) = try setUp(presence: false)
        let env = ["SSH_AUTH_SOCK": agent.socket]
        let listed = try f.run(["/usr/bin/ssh-add", "-L"], extra: env)
        #expect(listed.stdout.contains(try f.publicLine(key).split(separator: " ")[1]))
        #expect(listed.stdout.contains("keychain key"))
        #expect(try f.run(["/usr/bin/ssh-add", "-T", key + ".pub"], extra: env).status == 0)
        // The keychain locks: the very next requests list nothing and sign nothing.
        source.locked.withLock { $0 = true }
        let after = try f.run(["/usr/bin/ssh-add", "-L"], extra: env)
        #expect(!after.stdout.contains("keychain key"))
        #expect(try f.run(["/usr/bin/ssh-add", "-T", key + ".pub"], extra: env).status != 0)
        // -D removes ssh-add's keys only: it cannot remove a keychain's.
        source.locked.withLock { $0 = false }
        #expect(try f.run(["/usr/bin/ssh-add", "-D"], extra: env).status == 0)
        #expect(try f.run(["/usr/bin/ssh-add", "-L"], extra: env).stdout.contains("keychain key"))
    }

    @Test func aPresenceKeyIsRefusedAtOnceWhenNobodyCanConfirm() throws {
        let (f, _, agent, key) = try setUp(presence: true)
        let env = ["SSH_AUTH_SOCK": agent.socket]
        #expect(try f.run(["/usr/bin/ssh-add", "-L"], extra: env).stdout.contains("keychain key"))
        let started = Date()
        #expect(try f.run(["/usr/bin/ssh-add", "-T", key + ".pub"], extra: env).status != 0)
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
