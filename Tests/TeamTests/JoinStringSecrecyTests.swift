import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// The join string is "not a secret: share it freely" (docs/team.md), so it must not carry
/// the database password an admin put in the DSN given to `kc team create`.
@Suite struct JoinStringSecrecyTests {
    @Test func theJoinStringLeavesOutTheDatabasePassword() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let secret = "db-pw-7f3a91"
        for given in [dsn.replacingOccurrences(of: "postgres@", with: "postgres:\(secret)@"), dsn + "?password=\(secret)"] {
            let admin = try KCHome()
            let created = try TeamCommandTests.run(admin, ["team", "create", "t\(given.count)", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
            #expect(!created.stdout.contains(secret), "the join string holds the database password: \(created.stdout)")
            #expect(!created.stderr.contains(secret))
            // It still names the same database: a device joins with it (the test cluster
            // trusts loopback; elsewhere the joiner brings its own password, ~/.pgpass).
            let join = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let bob = try KCHome()
            try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob", "--kdf", "interactive"])
        }
    }
}

/// libpq's parse errors quote the offending token, which may be the password (a runner's
/// DSN in a CI log, say): kc's message about a malformed DSN must not repeat it.
@Suite struct MalformedDSNMessageTests {
    @Test(arguments: ["postgresql://kc:pa%zzss-51@127.0.0.1/kc", "host=127.0.0.1 pa%zzss-51",
                      "postgresql://kc@127.0.0.1:pa%zzss-51/kc"])
    func aMalformedDSNIsRefusedWithoutQuotingIt(_ dsn: String) throws {
        let e = failure { try PostgresConnection.parse(dsn) }
        #expect(e?.status == errSecParam)
        #expect(e?.message.contains("pa%zzss") == false, "\(e?.message ?? "")")
        #expect(e?.message.contains("malformed") == true)
    }
}
