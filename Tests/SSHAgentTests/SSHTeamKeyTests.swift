import Foundation
import KCTestSupport
import Testing

/// `-k team:NAME`: a team's deploy key, stored and listed through the team agent on a real
/// PostgreSQL server, and served by `KeychainIdentities` while the team agent holds it.
@Suite struct SSHTeamKeyTests {
    @Test func teamKeychainStoresAndLists() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let h = try SSHKeyHome()
        var out = try h.kc(["team", "create", "deploy", "--dsn", dsn, "--kdf", "interactive"], password: "team pw")
        #expect(out.status == 0, "\(out.stderr)")
        // Locked: the team agent does not hold it, and kc-ssh never opens it itself.
        out = try h.ssh(["list", "-k", "team:deploy"], password: nil)
        #expect(out.status == 36 && out.stderr.contains("kc unlock -k team:deploy"), "\(out.stderr)")
        out = try h.kc(["unlock", "-k", "team:deploy"], password: "team pw")
        #expect(out.status == 0, "\(out.stderr)")
        try h.keygen("key", ["-t", "ed25519"], comment: "ci")
        out = try h.ssh(["add", "key", "-k", "team:deploy", "--name", "ci-deploy"], password: nil)
        #expect(out.status == 0, "\(out.stderr)")
        let generated = try h.ssh(["generate", "release", "--type", "ecdsa", "-k", "team:deploy"], password: nil)
        #expect(generated.status == 0, "\(generated.stderr)")
        out = try h.ssh(["list", "-k", "team:deploy"], password: nil)
        #expect(out.stdout == (try h.publicKey("key")) + " ci-deploy\n" + generated.stdout, "\(out.stderr)")
        #expect(try h.ssh(["list"]).stdout.isEmpty, "the file keychain holds none of them")
        // The SSH agent's source sees the team keychain's keys through the team agent.
        let names = try KeychainIdentitiesTests.source(h).identities().map(\.comment)
        #expect(names == ["ci-deploy", "release"], "\(names)")
    }
}
