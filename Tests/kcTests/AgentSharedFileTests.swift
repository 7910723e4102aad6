import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The agent and another process with the same keychain open (issue 29: user presence now
/// reads and writes protected items in kc's own process while the agent holds the keychain).
/// `kc verify` through the agent opened a second connection, checking the file through a
/// descriptor of its own; closing that descriptor dropped every POSIX lock the agent held
/// on the file, SQLite's included. The next process to close the keychain then took itself
/// for the last connection and unlinked the -shm, and the agent, still mapping the unlinked
/// one, never saw another process's commit again: an item added in kc's own process was
/// missing from every answer of the agent until it restarted.
@Suite struct AgentSharedFileTests {
    @Test func aWriteByAnotherProcessAfterAVerifyIsSeenByTheAgent() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["verify"]).status == 0)
        // Another process opens the keychain and closes it again (kc settings reads here).
        #expect(try h.kc(["settings"], password: KCHome.password).status == 0)
        // This process writes an item (as kc does for a protected one, or the Security module).
        let keychain = try Keychain.open(at: h.defaultKeychain, password: try SecureBytes(copying: Array(KCHome.password.utf8)))
        _ = try keychain.add([
            kSecClass: kSecClassGenericPassword, kSecAttrService: "written-here", kSecAttrAccount: "me",
            kSecValueData: Data("value".utf8)
        ])
        keychain.lock()
        let out = try h.kc(["find", "-s", "written-here", "-w"])
        #expect(out.status == 0 && out.stdout == "value", "the agent did not see the write: \(out.stderr)")
        let agentDir = h.directory + "/agent"
        let pid = (try? String(contentsOfFile: agentDir + "/agent.lock", encoding: .utf8))?.split(separator: "\n").first.flatMap { Int32($0) } ?? 0
        if pid > 0, let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) {
            #expect(!maps.contains("-shm (deleted)"), "the agent maps an unlinked -shm")
        }
    }
}
