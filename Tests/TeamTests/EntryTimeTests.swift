import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// Entry times (`docs/team.md`, "Entry times"; issue 29, item 4): they never go back along
/// the log and never lie more than `TeamAuthority.clockSkew` ahead of the reader's clock;
/// a writer signs the later of its clock and the previous entry's time. Real SQL against
/// the real PostgreSQL (the end-to-end attack is in `HostileServerTests`).
@Suite struct EntryTimeTests {
    /// Makes `e`, signed by `keys`, the head (the server, with or without a writer's help).
    static func append(_ team: TeamFixture, _ e: LogEntry) throws {
        let server = try team.server()
        let id = PGValue.bytes(team.keychainID)
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 2, $3)",
            [id, .int64(Int64(e.generation)), .bytes(e.encoded)])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3",
            [.int64(Int64(e.generation)), .bytes(e.hash), id])
    }

    /// A heartbeat after the admin's view, signed by `keys` and dated `time`.
    static func heartbeat(_ team: TeamFixture, by keys: MemberKeys, time: UInt64) -> LogEntry {
        let a = team.admin.authority
        var e = LogEntry(
            kind: .heartbeat, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: keys.memberID,
            time: time, setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: a.roster.digest)
        e.sign(keychainID: team.keychainID, with: keys)
        return e
    }

    /// A writer signs a heartbeat dated before the entry it follows (its clock set back, or
    /// to sign inside a membership that the log shows has ended): refused by a running view
    /// and by a first open.
    @Test func anEntryDatedBeforeTheOneItFollowsIsRefused() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        try Self.append(team, Self.heartbeat(team, by: bob.keys, time: team.admin.authority.lastTime - 600))
        let live = failure { try team.admin.keychain.itemCount() }
        #expect(live?.status == errSecInvalidKeychain)
        #expect(live?.message.contains("before the entry it follows") == true, "\(String(describing: live))")
        #expect(failure { try team.reopen(bob.keys, as: "bob") }?.status == errSecInvalidKeychain)
    }

    /// An entry dated further ahead than the allowed skew is refused; one within it is
    /// accepted, and the next writer signs no earlier time than it (its own clock behind),
    /// so that a member with a fast clock does not lock the others out of writing.
    @Test func theFutureIsBoundedAndWritersNeverSignAnEarlierTime() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let carol = try team.addMember("carol", role: .reader)
        let ahead = TeamAuthority.now + TeamAuthority.clockSkew / 2
        try Self.append(team, Self.heartbeat(team, by: bob.keys, time: ahead))
        #expect(try team.admin.keychain.itemCount() == 0)
        try team.admin.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("1".utf8)]))
        #expect(team.admin.authority.lastTime >= ahead)
        #expect(try carol.keychain.itemCount() == 1)
        #expect(try team.reopen(carol.keys, as: "carol").keychain.itemCount() == 1)
        try Self.append(team, Self.heartbeat(team, by: bob.keys, time: TeamAuthority.now + TeamAuthority.clockSkew + 3_600))
        let future = failure { try carol.keychain.itemCount() }
        #expect(future?.status == errSecInvalidKeychain)
        #expect(future?.message.contains("in the future") == true, "\(String(describing: future))")
    }
}
