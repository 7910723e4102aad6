import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The tests that act as another account (uid 65534) run copies of the programs in a
/// folder it reaches, and a folder it cannot enter fails early, saying which: the suite
/// passes wherever the checkout lives (a clone in a 0700 folder; issue 29).
@Suite struct OtherUserTests {
    @Test(.enabled(if: getuid() == 0, "acts as another account"))
    func aFolderTheAccountCannotEnterFailsEarlySayingWhich() throws {
        var template = Array("/tmp/kc-private-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        let folder = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(folder, 0o700) == 0)
        // As a checkout in a 0700 folder is: the build's kc is out of the account's reach.
        var caught: KeychainError?
        do { _ = try OtherUser.install(["kc"], into: folder + "/bin") } catch let e as KeychainError { caught = e }
        #expect(caught?.message.contains("uid 65534 cannot enter \(folder) (mode 700)") == true, "\(String(describing: caught))")
        let blocked = try Spawn.run(
            OtherUser.setpriv + ["/bin/sh", "-c", "exec \"$0\" --version", folder + "/bin/kc"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(blocked.status != 0, "the check agrees with the kernel")
        // Under /tmp, in a home of its own, the copy runs as the account.
        let home = try KCHome(base: OtherUser.base)
        #expect(chown(home.directory, OtherUser.uid, OtherUser.uid) == 0)
        let reachable = try OtherUser.install(["kc", "kc-secret-service"], into: home.directory + "/bin")
        try OtherUser.checkReachable(reachable["kc-secret-service"] ?? "")
        let out = try Spawn.run(
            OtherUser.setpriv + ["/bin/sh", "-c", "exec \"$0\" --version", reachable["kc"] ?? ""],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(out.status == 0 && out.stdout.hasPrefix("kc "), "\(out.stderr)")
    }
}
