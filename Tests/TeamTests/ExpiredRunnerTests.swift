import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A writer runner's token expires (`--expires`), but whoever holds it keeps the runner's
/// signing key and chooses the time it signs into an entry: backdating it to before the
/// expiry must not make a write after the expiry acceptable once the log shows that time
/// has passed. Real SQL against the real PostgreSQL.
@Suite struct ExpiredRunnerTests {
    @Test func anExpiredRunnerCannotWriteByBackdatingItsEntry() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let expiry = TeamAuthority.now + 2
        let token = try TeamAdmin.addRunner(team.admin.opened, teamName: team.name, memberName: "ci", role: .writer, expires: expiry, dsn: team.dsn)
        let runner = try MemberKeys(seed: try RunnerToken.parse(token).seed.copy(prefix: MemberKeys.seedBytes))
        sleep(3)
        // Time passes on the log: an admin's heartbeat after the expiry.
        try team.admin.keychain.withTeamKeys { keys, adopt in try team.admin.authority.heartbeat(keys: keys, adopt: adopt) }
        #expect(team.admin.authority.lastTime >= expiry)
        // The runner's holder signs a heartbeat dated before its expiry, linked to the head.
        let a = team.admin.authority
        var e = LogEntry(kind: .heartbeat, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: runner.memberID,
                         time: expiry - 1, setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: a.roster.digest)
        e.sign(keychainID: team.keychainID, with: runner)
        let server = try team.server()
        _ = try server.execute("INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 2, $3)",
                               [.bytes(team.keychainID), .int64(Int64(e.generation)), .bytes(e.encoded)])
        _ = try server.execute("UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3",
                               [.int64(Int64(e.generation)), .bytes(e.hash), .bytes(team.keychainID)])
        let live = failure { try bob.keychain.itemCount() }
        #expect(live?.status == errSecInvalidKeychain)
        #expect(live?.message.contains("expired") == true)
        #expect(failure { try team.reopen(bob.keys, as: "bob") }?.status == errSecInvalidKeychain)
    }
}
