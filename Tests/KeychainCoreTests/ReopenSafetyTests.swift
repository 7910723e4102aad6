import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// The agent unlocking a keychain it keeps open (for its after-first-unlock items) opens it
/// again with `Keychain.reopened`, which must not open and close a descriptor of the file
/// (that would drop the agent's locks, AgentReopenTests). It used to skip the whole file
/// check for that, keeping only the (device, inode) match: a keychain made readable by
/// others, one whose -wal another could read, one in a folder others can write, or a link
/// put at the path to the same file was opened again. Now every check but the two that
/// read the file itself (its header and magic, checked at the first open) is made.
///
/// Tested here, on the function the agent calls: through the kc binary, `kc unlock` checks
/// the file itself before it sends a password, and the unlock that skips that client check
/// (a Secret Service collection's kept password) needs a session bus and a provider set up.
@Suite struct ReopenSafetyTests {
    @Test(arguments: ["mode", "wal", "folder", "link"])
    func aReopenChecksTheFileAsAnOpenDoes(_ change: String) throws {
        let t = try TempKeychain()
        let password = try secure(TempKeychain.password)
        #expect(try t.keychain.reopened(password: password, minimumGeneration: 0) != nil, "untouched, it opens again")
        switch change {
        case "mode":
            #expect(chmod(t.path, 0o644) == 0)
        case "wal":
            #expect(FileManager.default.fileExists(atPath: t.path + "-wal"))
            #expect(chmod(t.path + "-wal", 0o644) == 0)
        case "folder":
            #expect(chmod(t.directory, 0o777) == 0)
        default:
            // The same file (same device and inode) reached through a link at the path.
            #expect(link(t.path, t.path + ".real") == 0 && unlink(t.path) == 0)
            #expect(symlink(t.path + ".real", t.path) == 0)
        }
        #expect(throws: KeychainError.self, "\(change)") {
            do {
                _ = try t.keychain.reopened(password: password, minimumGeneration: 0)
            } catch let error as KeychainError {
                #expect(error.status == errSecParam, "\(change): \(error)")
                throw error
            }
        }
    }
}
