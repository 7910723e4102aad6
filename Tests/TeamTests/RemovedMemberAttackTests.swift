import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A removed member colluding with the server (TEAM.md, "Removing a member = re-key"): it
/// still holds the old master key and its signing key, and the server holds old dumps. What
/// it must not get is a remaining member sealing a new secret under the old master key, or
/// accepting a write it signs after its removal. Real SQL against the real PostgreSQL.
@Suite struct RemovedMemberAttackTests {
    /// Every row of the keychain as the server holds it.
    static func rows(_ team: TeamFixture) throws -> [ItemRow] {
        let store = PostgresItemStore(connection: try team.server(), keychainID: team.keychainID, label: "attack")
        var rows: [ItemRow] = []
        try store.transaction(write: false) {
            try store.forEachRow(.all, includeData: true) {
                rows.append($0); return true
            }
        }
        return rows
    }

    /// Bob and carol are members and have seen one item ("before"); bob's keys are kept
    /// (what a removed member still holds); then the admin removes bob (a re-key) while
    /// carol's view is still at the key generation before.
    static func bobRemovedWhileCarolLagsBehind() throws -> (TeamFixture, carol: TeamFixture.Member, bobKeys: KeyHierarchy) {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let carol = try team.addMember("carol")
        try team.admin.keychain.add(genp([kSecAttrService: "before", kSecValueData: Data("1".utf8)]))
        _ = try bob.keychain.itemCount()
        #expect(try carol.keychain.itemCount() == 1)
        let bobKeys = try bob.keychain.withTeamKeys { k, _ in k }
        try TeamAdmin.remove(team.admin.opened, memberName: "bob")
        return (team, carol, bobKeys)
    }

    /// The secrets `keys` (a removed member's old keys) can open among the server's rows.
    static func secretsOpened(_ team: TeamFixture, with keys: KeyHierarchy) throws -> [Data] {
        try rows(team).compactMap { try? RowCodec(keys: keys).openDataCopy($0) }
    }

    /// The server hides bob's removal from the first open of carol, who saw it: it relabels
    /// the removal entry's `kind` column (so the roster query skips it), puts back carol's
    /// old master-key wrap from a dump, and shows as head a heartbeat bob signs after his
    /// removal under the old roster, linked to the genuine entry carol's checkpoint names.
    /// Carol's restarted agent must refuse it: accepting it would have her seal new secrets
    /// under the master key bob still holds.
    @Test func aRemovalHiddenFromTheRosterChainIsRefusedAtFirstOpen() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let carol = try team.addMember("carol")
        _ = try bob.keychain.itemCount()   // bob's view: the roster with carol, key generation 1
        let bobKeys = try bob.keychain.withTeamKeys { k, _ in k }
        let server = try team.server()
        _ = try server.execute("CREATE TABLE old_wraps AS TABLE kc_mk_wraps")   // the old dump
        try TeamAdmin.remove(team.admin.opened, memberName: "bob")
        let removal = team.admin.authority.generation
        _ = try carol.keychain.itemCount()   // carol sees the removal (re-key)
        try team.admin.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("x".utf8)]))
        #expect(try carol.keychain.itemCount() == 1)
        carol.keychain.lock()   // her checkpoint names the entry after the removal

        let a = team.admin.authority
        var forged = LogEntry(
            kind: .heartbeat, generation: a.generation + 1, previous: a.head, keyGeneration: 1, signer: bob.keys.memberID,
            time: TeamAuthority.now, setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: bob.authority.roster.digest)
        forged.sign(keychainID: team.keychainID, with: bob.keys)
        let id = PGValue.bytes(team.keychainID)
        _ = try server.execute("UPDATE kc_log SET kind = 0 WHERE keychain_id = $1 AND generation = $2", [id, .int64(Int64(removal))])
        _ = try server.execute("INSERT INTO kc_mk_wraps SELECT * FROM old_wraps ON CONFLICT DO NOTHING")
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 2, $3)",
            [id, .int64(Int64(forged.generation)), .bytes(forged.encoded)])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2, key_gen = 1 WHERE keychain_id = $3",
            [.int64(Int64(forged.generation)), .bytes(forged.hash), id])

        switch Result(catching: { try team.reopen(carol.keys, as: "carol") }) {
        case .success(let fooled):
            // What the attack buys: carol's next secret is sealed under the key bob kept.
            try fooled.keychain.add(genp([kSecAttrService: "new", kSecValueData: Data("s3cret".utf8)]))
            let stolen = try Self.secretsOpened(team, with: bobKeys)
            Issue.record(
                "carol accepted a head signed by bob after his removal (key generation \(fooled.authority.keyGeneration)); bob reads \(stolen.count) secret(s)")
        case .failure(let error):
            let e = error as? KeychainError
            #expect(e?.status == errSecInvalidKeychain)
        }
        // Deleting the removal entry outright instead of relabelling it is refused too.
        _ = try server.execute("DELETE FROM kc_log WHERE keychain_id = $1 AND generation = $2", [id, .int64(Int64(removal))])
        #expect(failure { try team.reopen(carol.keys, as: "carol") }?.status == errSecInvalidKeychain)
    }

    /// A full verification reads the log a page at a time: every page boundary is still
    /// one link of the chain, and an entry taken out in the middle is still found.
    @Test func aFullVerificationPagesThroughTheWholeLog() throws {
        let team = try TeamFixture()
        _ = try team.addMember("bob")
        for i in 0..<5 { try team.admin.keychain.add(genp([kSecAttrService: "s\(i)", kSecValueData: Data("\(i)".utf8)])) }
        let a = team.admin.authority
        a.logPageSize = 2
        #expect(failure { try team.admin.keychain.withTeamKeys { keys, _ in try a.verifyAll(keys: keys) } } == nil)
        #expect(a.itemCount == 5 && a.generation == 7)
        _ = try team.server().execute("DELETE FROM kc_log WHERE keychain_id = $1 AND generation = 4", [.bytes(team.keychainID)])
        #expect(failure { try team.admin.keychain.withTeamKeys { keys, _ in try a.verifyAll(keys: keys) } }?.status == errSecInvalidKeychain)
    }

    /// The server makes a member's catch-up fail just after the re-key entry of bob's
    /// removal (a junk entry after it), then takes the junk back. The member's view must not
    /// keep half of the catch-up (the new roster and key generation, with the old master key
    /// still in use): its next secret would be sealed under the key bob kept.
    @Test func aCatchUpThatFailsAfterARekeyLeavesTheViewAsItWas() throws {
        let (team, carol, bobKeys) = try Self.bobRemovedWhileCarolLagsBehind()
        let a = team.admin.authority
        let removal = a.generation, removalHead = a.head
        let server = try team.server()
        let id = PGValue.bytes(team.keychainID)
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 0, $3)",
            [id, .int64(Int64(removal + 1)), .bytes(Array(repeating: 7, count: 40))])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3",
            [.int64(Int64(removal + 1)), .bytes(Array(repeating: 7, count: 32)), id])
        #expect(failure { try carol.keychain.itemCount() } != nil)
        // The genuine head again.
        _ = try server.execute("DELETE FROM kc_log WHERE keychain_id = $1 AND generation = $2", [id, .int64(Int64(removal + 1))])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3",
            [.int64(Int64(removal)), .bytes(removalHead), id])
        try carol.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("s3cret".utf8)]))
        #expect(carol.authority.keyGeneration == 2)
        #expect(try Self.secretsOpened(team, with: bobKeys).isEmpty, "bob, removed, opens a secret written after his removal")
        #expect(try team.admin.keychain.copyMatching(genp([kSecAttrService: "after", kSecReturnData: true])) as? Data == Data("s3cret".utf8))
    }

    /// A member whose agent was idle across a removal (re-key) and a later write catches up
    /// to both at its next request, instead of calling the genuine log tampered.
    @Test func aMemberIdleAcrossARemovalAndAWriteCatchesUp() throws {
        let team = try TeamFixture()
        _ = try team.addMember("bob")
        let carol = try team.addMember("carol")
        let dave = try team.addMember("dave")
        try team.admin.keychain.add(genp([kSecAttrService: "one", kSecValueData: Data("1".utf8)]))
        #expect(try carol.keychain.itemCount() == 1)
        #expect(try dave.keychain.itemCount() == 1)
        try TeamAdmin.remove(team.admin.opened, memberName: "bob")
        try team.admin.keychain.add(genp([kSecAttrService: "two", kSecValueData: Data("2".utf8)]))
        try team.admin.keychain.update(genp([kSecAttrService: "one"]), [kSecValueData: Data("1b".utf8)])
        #expect(try carol.keychain.itemCount() == 2)
        #expect(try carol.keychain.copyMatching(genp([kSecAttrService: "one", kSecReturnData: true])) as? Data == Data("1b".utf8))
        #expect(carol.authority.keyGeneration == 2)
        // Such a catch-up still finds a row the server edited meanwhile.
        _ = try team.server().execute(
            "UPDATE kc_items SET metadata = set_byte(metadata, 20, get_byte(metadata, 20) # 1) WHERE seq = (SELECT min(seq) FROM kc_items)")
        #expect(failure { try dave.keychain.itemCount() }?.status == errSecDecode)
    }
}
