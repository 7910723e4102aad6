import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A write (or read) that is tried again after its first attempt caught up across a
/// re-key: a lost race (`TeamAuthority.write`'s loop) or a prepared statement the pool
/// "lost" (SQLSTATE 26000, `PostgresItemStore.transaction` runs the transaction again).
/// The second attempt must use the new master key the first one opened, not the keys the
/// operation started with: a secret sealed under the old key is one the removed member
/// still opens. The server plays its part with real SQL (a trigger on the keychain row).
@Suite struct StaleKeyRetryAttackTests {
    /// Carol's view is at key generation 1 and bob's old keys are kept; then the admin
    /// removes bob (a re-key) and the server installs a trigger that spoils the first
    /// UPDATE of the keychain row (carol's claim of the next generation) with `spoil`.
    private func removalThenSpoiledClaim(_ spoil: String) throws -> (TeamFixture, carol: TeamFixture.Member, bobKeys: KeyHierarchy) {
        let (team, carol, bobKeys) = try RemovedMemberAttackTests.bobRemovedWhileCarolLagsBehind()
        let server = try team.server()
        // A sequence is not rolled back with the aborted transaction: the trigger fires once.
        _ = try server.execute("CREATE SEQUENCE attack_once")
        _ = try server.execute(
            """
            CREATE FUNCTION attack_claim() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF nextval('attack_once') = 1 THEN \(spoil); END IF; RETURN NEW; END $$
            """)
        _ = try server.execute("CREATE TRIGGER attack_claim BEFORE UPDATE ON kc_keychains FOR EACH ROW EXECUTE FUNCTION attack_claim()")
        return (team, carol, bobKeys)
    }

    /// What carol wrote after the removal: sealed under the new key (the admin reads it),
    /// never under the old one bob kept.
    private func expectSealedUnderTheNewKey(_ team: TeamFixture, _ carol: TeamFixture.Member, bobKeys: KeyHierarchy) throws {
        #expect(carol.authority.keyGeneration == 2)
        let stolen = try RemovedMemberAttackTests.secretsOpened(team, with: bobKeys)
        #expect(stolen.isEmpty, "bob, removed, opens \(stolen.count) secret(s) carol wrote after his removal")
        #expect(try team.admin.keychain.copyMatching(genp([kSecAttrService: "after", kSecReturnData: true])) as? Data == Data("s3cret".utf8))
    }

    /// The server answers carol's first claim with 0 rows (as when another writer won):
    /// her write is tried again after a catch-up that already met the re-key.
    @Test func aWriteRetriedAfterALostRaceSealsUnderTheNewKey() throws {
        let (team, carol, bobKeys) = try removalThenSpoiledClaim("RETURN NULL")
        try carol.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("s3cret".utf8)]))
        try expectSealedUnderTheNewKey(team, carol, bobKeys: bobKeys)
    }

    /// The server answers carol's first claim with SQLSTATE 26000 (a prepared statement
    /// a pool lost): her write transaction runs again after a catch-up that already met the
    /// re-key.
    @Test func aWriteRunAgainAfterAForgedLostStatementSealsUnderTheNewKey() throws {
        let (team, carol, bobKeys) = try removalThenSpoiledClaim("RAISE EXCEPTION 'prepared statement does not exist' USING ERRCODE = '26000'")
        try carol.keychain.add(genp([kSecAttrService: "after", kSecValueData: Data("s3cret".utf8)]))
        #expect(!carol.authority.store.connection.preparing, "the forged error went the way of a lost statement")
        try expectSealedUnderTheNewKey(team, carol, bobKeys: bobKeys)
    }

    /// Whatever path forgets to adopt a re-key's keys, a catch-up refuses keys of another
    /// key generation than its view's instead of handing them back to read or seal under.
    @Test func aCatchUpRefusesKeysOfAnOlderKeyGeneration() throws {
        let (team, carol, bobKeys) = try removalThenSpoiledClaim("NULL")
        #expect(try carol.keychain.itemCount() == 1)
        #expect(carol.authority.keyGeneration == 2)
        #expect(failure { try carol.authority.catchUp(bobKeys) }?.status == errSecInternalError)
        #expect(carol.authority.keyGeneration == 2)
        #expect(try team.admin.keychain.itemCount() == 1)
    }

    /// `kc verify` as the first request after a re-key: the full verification opens the new
    /// master key, and every row must then be opened under it, not under the keys the check
    /// began with (which would call every genuine row damaged).
    @Test func aCheckThatMeetsAReKeyOpensTheRowsUnderTheNewKey() throws {
        let (team, carol, _) = try removalThenSpoiledClaim("NULL")
        #expect(try carol.keychain.check() == 1)
        #expect(carol.authority.keyGeneration == 2)
        #expect(try team.admin.keychain.check() == 1)
    }
}
