import AgentWire
import Foundation
import KCTestSupport
import KeychainClient
import KeychainCore
import SSHAgent
import Testing

@testable import kc_ssh

/// The source the SSH agent asks for kc's keys (`KeychainIdentities`), against the real kc
/// agent: nothing while the keychain is locked, its keys once `kc unlock` hands it to the
/// agent, nothing again once it locks; never a prompt, never the keychain opened here.
@Suite struct KeychainIdentitiesTests {
    static func source(_ h: SSHKeyHome, presence: (@Sendable (PresencePrompt) throws -> SecureBytes)? = nil) -> KeychainIdentities {
        var agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))
        agent.agentProgram = KCBinary.path
        return KeychainIdentities(agent: agent, presence: presence)
    }

    /// The wire form of the key file `name` in the home, read in this process.
    static func wire(_ h: SSHKeyHome, _ name: String) throws -> (blob: [UInt8], wire: [UInt8]) {
        let contents = Array(try Data(contentsOf: URL(fileURLWithPath: h.directory + "/" + name)))
        let (key, _) = try SSHKeyFile(contents).privateKey(passphrase: nil)
        return (key.publicBlob, key.wire)
    }

    @Test func lockedServesNothingUnlockedServesTheKey() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"])
        try h.keygen("rsa", ["-t", "rsa", "-b", "2048"])
        #expect(try h.ssh(["add", "key", "--name", "laptop"]).status == 0)
        #expect(try h.ssh(["add", "rsa", "--name", "old"]).status == 0)
        let source = Self.source(h)
        let (blob, wire) = try Self.wire(h, "key")
        #expect(try source.identities().isEmpty, "no agent runs")
        #expect(try source.privateKey(for: blob) == nil)

        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let identities = try source.identities()
        #expect(identities.map(\.comment) == ["laptop", "old"])
        #expect(identities.first?.blob == blob)
        #expect(try source.privateKey(for: blob) == wire, "the wire form kc keeps is the file's key")
        #expect(try source.privateKey(for: Self.wire(h, "rsa").blob) == Self.wire(h, "rsa").wire)
        #expect(try source.requiresPresence(for: blob) == false)
        let unknown = Array(blob.dropLast()) + [blob.last.map { $0 ^ 1 } ?? 0]
        let found = try source.privateKey(for: unknown)
        #expect(found == nil, "an unknown blob")

        #expect(try h.kc(["lock"]).status == 0)
        #expect(try source.identities().isEmpty, "locked: the agent runs but holds nothing")
        #expect(try source.privateKey(for: blob) == nil)
    }

    /// A `--user-presence` key is listed, says so, and its private half needs the proof.
    @Test func userPresenceKeys() throws {
        let h = try SSHKeyHome()
        try h.keygen("key", ["-t", "ed25519"])
        #expect(try h.ssh(["add", "key", "--name", "guarded", "--user-presence"]).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let (blob, wire) = try Self.wire(h, "key")
        var source = Self.source(h)
        #expect(try source.identities().map(\.comment) == ["guarded"])
        #expect(try source.requiresPresence(for: blob) == true)
        do {
            _ = try source.privateKey(for: blob)
            Issue.record("released without a proof")
        } catch let error as KeychainError {
            #expect(error.status == errSecInteractionNotAllowed, "\(error)")
        }
        source = Self.source(h) { _ in try SecureBytes(copying: Array(KCHome.password.utf8)) }
        #expect(try source.privateKey(for: blob) == wire)
        #expect(try source.requiresPresence(for: blob) == false, "the password question is the confirmation: the agent asks no other")
    }

    /// An item tagged as one key that holds another key's private half (another program,
    /// or a team member, wrote it) is not used to sign for the key it names.
    @Test func anItemHoldingAnotherKeyIsRefused() throws {
        let h = try SSHKeyHome()
        try h.keygen("a", ["-t", "ed25519"])
        try h.keygen("b", ["-t", "ed25519"])
        let (blobA, _) = try Self.wire(h, "a")
        let contents = Array(try Data(contentsOf: URL(fileURLWithPath: h.directory + "/b")))
        let (keyB, _) = try SSHKeyFile(contents).privateKey(passphrase: nil)
        let keychain = try Keychain.open(at: h.home.defaultKeychain, password: SecureBytes(copying: Array(KCHome.password.utf8)))
        var query = SSHKeyItems.addQuery(keyB, name: "planted", userPresence: false)
        query[kSecAttrApplicationTag] = SSHKeyItems.tagPrefix + SSHPublicKey.fingerprint(blobA)
        query[kSecAttrApplicationLabel] = Data(blobA)
        _ = try KeychainSession(opened: keychain).add(query)
        keychain.lock()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let source = Self.source(h)
        #expect(try source.identities().map(\.blob) == [blobA], "listed by its attributes")
        do {
            _ = try source.privateKey(for: blobA)
            Issue.record("another key's private half was served for A")
        } catch let error as KeychainError {
            #expect(error.status == errSecDecode && error.message.contains("holds another key"), "\(error)")
        }
    }
}
