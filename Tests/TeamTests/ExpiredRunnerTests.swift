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
        var e = LogEntry(
            kind: .heartbeat, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: runner.memberID,
            time: expiry - 1, setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: a.roster.digest)
        e.sign(keychainID: team.keychainID, with: runner)
        let server = try team.server()
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 2, $3)",
            [.bytes(team.keychainID), .int64(Int64(e.generation)), .bytes(e.encoded)])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3",
            [.int64(Int64(e.generation)), .bytes(e.hash), .bytes(team.keychainID)])
        let live = failure { try bob.keychain.itemCount() }
        #expect(live?.status == errSecInvalidKeychain)
        #expect(live?.message.contains("expired") == true)
        #expect(failure { try team.reopen(bob.keys, as: "bob") }?.status == errSecInvalidKeychain)
    }

    /// A writer runner whose agent was unlocked before its token expired goes on after the
    /// expiry (a long CI job, the real `kc` and team agent): its write, signed after the
    /// expiry, must not be committed. Every other member refuses such an entry ("signed
    /// after its membership expired"), and no one reads or writes past a refused entry:
    /// one late write left the keychain unreadable to every member until someone edited
    /// the database. The runner's kc refuses it, and its reads, once the token expired.
    @Test func anExpiredRunnersAgentWritesNothingTheOthersRefuse() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let expiry = TeamAuthority.now + 8
        let token = try TeamAdmin.addRunner(team.admin.opened, teamName: team.name, memberName: "ci", role: .writer, expires: expiry, dsn: team.dsn)
        let runner = try KCHome()
        let file = runner.directory + "/kc-token"
        try Data(token.withUnsafeBytes { Array($0) }).write(to: URL(fileURLWithPath: file))
        try TeamCommandTests.run(runner, ["unlock", "--team-token-file", file], password: nil)
        let env = ["KC_KEYCHAIN": "team:\(team.name)"]
        while TeamAuthority.now <= expiry { usleep(200_000) }
        let late = try runner.kc(["add", "-s", "after", "-a", "ci", "-w", "late"], extra: env)
        #expect(late.status == Int32(UInt8(truncatingIfNeeded: errSecAuthFailed)), "an expired runner's write: \(late.status) \(late.stderr)")
        #expect(late.stderr.contains("expired"), "\(late.stderr)")
        // When, in ISO 8601 as every time kc prints (issue 32), not in seconds since 1970.
        let when = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(expiry)))
        #expect(late.stderr.contains("expired at \(when)"), "\(late.stderr)")
        let read = try runner.kc(["find", "-s", "after", "-a", "ci", "-w"], extra: env)
        #expect(read.status == Int32(UInt8(truncatingIfNeeded: errSecAuthFailed)), "an expired runner's read: \(read.status) \(read.stderr)")
        #expect(failure { try bob.keychain.itemCount() } == nil, "bob can no longer read the keychain after the runner's late write")
    }
}
