import Foundation
import Testing
import KeychainCore
import AgentWire
import KeychainClient
import KCTestSupport

/// Issue 29, item 8, for KeychainClient (what the Security module and other front ends use):
/// its session used to send the password typed for a presence prompt to any peer that passed
/// the checks visible to it (for a program other than kc, only the uids and tracing), so a
/// relaying impostor, even a visible one, collected it. Now the session reads the protected
/// item in its own process with the password; the relay records neither.
@Suite struct ClientRelayTests {
    @Test func aSessionGivesARelayNoProofAndNoProtectedSecret() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711-client"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let relay = try AgentRelay.start(h)
        defer { relay.stop() }
        let agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))   // not kc: uids and tracing only
        let session = try KeychainSession(path: h.defaultKeychain, agent: agent) { _ in
            throw KeychainError(errSecInteractionNotAllowed, "no password here")
        }
        var asked = 0
        session.presence = { _ in
            asked += 1
            return try SecureBytes(copying: Array(KCHome.password.utf8))
        }
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: "bank", kSecReturnData: true]
        #expect(try session.copyMatching(query) as? Data == Data("pin-4711-client".utf8))
        #expect(asked == 1)
        #expect(relay.connections >= 1, "the session went through the relay")
        #expect(!relay.received(KCHome.password), "the relay received the password typed as a proof")
        #expect(!relay.received("pin-4711-client"), "the relay received the protected secret")
    }
}
