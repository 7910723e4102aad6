import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// Issue 15, item 8: an agent folder made by another account does not stop commands that
/// have a password.
@Suite struct ForeignAgentFolderTests {
    /// The agent folder made by another account (as `/tmp/kc-UID` can be when
    /// XDG_RUNTIME_DIR is unset): with a password, every command warns once and works here;
    /// without one, the error says what to do.
    @Test(.enabled(if: geteuid() == 0, "needs root to make a folder another account owns"))
    func aForeignAgentFolderDoesNotBlockCommandsWithAPassword() throws {
        let h = try KCHome()
        try h.createKeychain()
        let dir = h.directory + "/agent"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(chown(dir, 65534, 65534) == 0)

        var out = try h.kc(["add", "-s", "svc", "-a", "me"], password: KCHome.password, stdin: Data("tok".utf8))
        #expect(out.status == 0, "\(out.stderr)")
        let warnings = out.stderr.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.count == 1, "one warning: \(out.stderr)")
        #expect(out.stderr.contains("belongs to uid 65534") && out.stderr.contains("not using the kc agent"), "\(out.stderr)")
        out = try h.kc(["find", "-s", "svc", "-w"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout == "tok", "\(out.stderr)")
        out = try h.kc(["find", "-s", "svc", "-w", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0 && out.stdout == "tok", "\(out.stderr)")

        // The git helper, started as git-credential-kc.
        let link = h.directory + "/git-credential-kc"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: KCBinary.path)
        var env = h.environment
        env["KC_PASSWORD"] = KCHome.password
        let stored = try Spawn.run(
            [link, "store"], environment: env, stdin: Data("protocol=https\nhost=git.example.com\nusername=alice\npassword=pa55\n\n".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        let got = try Spawn.run([link, "get"], environment: env, stdin: Data("protocol=https\nhost=git.example.com\n\n".utf8))
        #expect(got.status == 0 && got.stdout.contains("password=pa55"), "\(got.stdout) \(got.stderr)")

        // Without a password (and no terminal): exit 206, and what to do.
        out = try h.kc(["find", "-s", "svc", "-w"])
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("belongs to uid 65534"), "\(out.stderr)")
        #expect(out.stderr.contains("XDG_RUNTIME_DIR or KC_AGENT_DIR") && out.stderr.contains("KC_PASSWORD"), "\(out.stderr)")
        // kc unlock needs the agent: refused, nothing created in the folder.
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }
}
