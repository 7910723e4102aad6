import Foundation
import Testing
import KCTestSupport

/// Docker's and git's libsecret credential helpers, unchanged, storing in kc.
@Suite struct CredentialHelperClientTests {
    @Test func dockerCredentialSecretservice() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        let helper = "/usr/bin/docker-credential-secretservice"
        var out = try bus.run([helper, "store"], stdin: #"{"ServerURL":"https://registry.example.com","Username":"bob","Secret":"reg-token"}"#)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        out = try bus.run([helper, "get"], stdin: "https://registry.example.com")
        #expect(out.status == 0 && out.stdout.contains(#""Username":"bob""#) && out.stdout.contains(#""Secret":"reg-token""#), "\(out.stdout)\(out.stderr)")
        out = try bus.run([helper, "list"])
        #expect(out.status == 0 && out.stdout.contains(#""https://registry.example.com":"bob""#), "\(out.stdout)\(out.stderr)")
        out = try bus.run([helper, "erase"], stdin: "https://registry.example.com")
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        out = try bus.run([helper, "get"], stdin: "https://registry.example.com")
        #expect(out.status != 0 && out.stdout.contains("credentials not found"), "\(out.stdout)\(out.stderr)")
    }

    /// git's libsecret helper, built from the source Debian's git ships, behind real
    /// `git credential approve` / `fill` / `reject`.
    @Test func gitCredentialLibsecret() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let source = "/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c"
        let helper = home.directory + "/git-credential-libsecret"
        var out = try Spawn.run(
            ["/bin/sh", "-c", "gcc -o '\(helper)' '\(source)' $(pkg-config --cflags --libs glib-2.0 libsecret-1)"],
            environment: ["PATH": "/usr/bin:/bin"], timeout: 120)
        #expect(out.status == 0, "building git-credential-libsecret: \(out.stderr)")
        let git = ["/usr/bin/git", "-c", "credential.helper=", "-c", "credential.helper=" + helper]
        out = try bus.run(
            git + ["credential", "approve"],
            stdin: "protocol=https\nhost=git.example.com\nusername=alice\npassword=glpat-123\n\n")
        #expect(out.status == 0, "\(out.stderr)")
        var env = bus.environment
        env["GIT_TERMINAL_PROMPT"] = "0"
        out = try Spawn.run(git + ["credential", "fill"], environment: env, stdin: Data("protocol=https\nhost=git.example.com\n\n".utf8))
        #expect(out.status == 0 && out.stdout.contains("username=alice\npassword=glpat-123\n"), "\(out.stdout)\(out.stderr)")
        // The credential is a kc item: git's `user` attribute is its account.
        #expect(try home.kc(["find", "-a", "alice", "-w"]).stdout == "glpat-123")
        out = try bus.run(git + ["credential", "reject"], stdin: "protocol=https\nhost=git.example.com\nusername=alice\n\n")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try home.kc(["find", "-a", "alice"]).status == 44)
    }
}
