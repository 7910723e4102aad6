import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// The hostile server of TEAM.md, played with real SQL against the real PostgreSQL: each
/// attack is performed, and a member detects it (or it achieves nothing).
@Suite struct ServerAttackTests {
    /// The server answers an admin's `kc team add` with its own keys for the fingerprint.
    @Test func aSubstitutedKeyAtJoinIsRefused() throws {
        let team = try TeamFixture()
        let device = try MemberKeys.generate(), attacker = try MemberKeys.generate()
        _ = try TeamAdmin.requestToJoin(JoinString(keychainID: team.keychainID, dsn: team.dsn), memberName: "bob", member: device)
        let forged = JoinRequest(name: "bob", keys: attacker, keychainID: team.keychainID)
        _ = try team.server().execute("UPDATE kc_requests SET request = $1 WHERE fingerprint = $2", [.bytes(forged.encoded), .text(device.fingerprint)])
        let e = failure { try TeamAdmin.add(team.admin.opened, memberName: "bob", fingerprint: device.fingerprint, role: .writer) }
        #expect(e?.status == errSecInvalidKeychain)
        #expect(e?.message.contains("substituted") == true)
        #expect(team.admin.authority.roster.members.count == 1, "nobody was added")
    }

    /// The server swaps a member's master-key wrap for a key of its own, sealed to the
    /// member and signed by a key of its own.
    @Test func aSubstitutedMasterKeyWrapIsRefused() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let fake = try KeyHierarchy.newMasterKey(), forger = try MemberKeys.generate()
        let commitment = MasterKeyDelivery.commitment(masterKey: fake, keychainID: team.keychainID, keyGeneration: 1)
        let wrap = try MasterKeyDelivery.wrap(
            masterKey: fake, keychainID: team.keychainID, keyGeneration: 1, memberID: bob.keys.memberID,
            memberBoxKey: bob.keys.boxPublicKey, admin: forger, commitment: commitment)
        _ = try team.server().execute(
            "UPDATE kc_mk_wraps SET sealed = $1, sig = $2 WHERE member_id = $3",
            [.bytes(wrap.sealed), .bytes(wrap.signature), .bytes(bob.keys.memberID)])
        let e = failure { try team.reopen(bob.keys, as: "bob") }
        #expect(e?.status == errSecDecode || e?.status == errSecAuthFailed)
        #expect(e?.message.contains("substituted") == true)
    }

    /// The server appends a roster entry adding its own member, signed by its own key.
    @Test func aMemberRecordNotSignedByAnAdminIsRefused() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        let intruder = try MemberKeys.generate()
        let a = team.admin.authority
        let record = MemberRecord(name: "intruder", role: .admin, boxPublicKey: intruder.boxPublicKey, signPublicKey: intruder.signPublicKey)
        let roster = try Roster(a.roster.members + [record])
        var e = LogEntry(
            kind: .roster, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: intruder.memberID,
            time: TeamAuthority.now, roster: roster, masterKeyCommitment: a.commitment, previousRoster: a.rosterEntryHash,
            setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: roster.digest)
        e.sign(keychainID: team.keychainID, with: intruder)
        let server = try team.server()
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 1, $3)",
            [.bytes(team.keychainID), .int64(Int64(e.generation)), .bytes(e.encoded)])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3", [.int64(Int64(e.generation)), .bytes(e.hash), .bytes(team.keychainID)])
        _ = try server.execute(
            "INSERT INTO kc_members (keychain_id, member_id, record) VALUES ($1, $2, $3)",
            [.bytes(team.keychainID), .bytes(record.memberID), .bytes(record.encoded)])
        let live = failure { try bob.keychain.itemCount() }
        #expect(live?.status == errSecInvalidKeychain)
        #expect(live?.message.contains("not signed by an admin") == true)
        let fresh = failure { try team.reopen(bob.keys, as: "bob-2") }
        #expect(fresh?.status == errSecInvalidKeychain)
    }

    /// A reader holds the master key and could seal rows: its signed entry is still refused.
    @Test func aWriteSignedByAReaderIsRefused() throws {
        let team = try TeamFixture()
        let reader = try team.addMember("reader", role: .reader)
        let writer = try team.addMember("writer")
        _ = try writer.keychain.itemCount()
        // The reader seals a row with its keys, as its own kc would, and signs the entry.
        let keys = try reader.keychain.withTeamKeys { k, _ in k }
        let a = reader.authority
        _ = try reader.keychain.itemCount()
        var attributes: [String: AttributeValue] = ["svce": .string("planted"), "acct": .string(""), "sync": .int(0), "pdmn": .string("ak")]
        attributes["cdat"] = .date(0); attributes["mdat"] = .date(0)
        var row = try Keychain.seal(
            itemID: Sodium.randomBytes(16), .genericPassword, attributes, data: Array("evil".utf8), known: nil,
            keys: keys, rowVersion: a.generation + 1)
        let server = try team.server()
        let store = PostgresItemStore(connection: server, keychainID: team.keychainID, label: "attack")
        row.seq = try store.transaction(write: true) { try store.insert(row) }
        var set = a.set
        let h = RowHash.of(row)
        set.add(h)
        var e = LogEntry(
            kind: .items, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: reader.keys.memberID,
            time: TeamAuthority.now,
            changes: [RowChange(itemID: row.itemID, classCode: "genp", oldVersion: 0, newVersion: row.rowVersion, oldHash: [], newHash: h)],
            setDigest: set.digest, count: UInt64(a.ledger.count + 1), rosterDigest: a.roster.digest)
        e.sign(keychainID: team.keychainID, with: reader.keys)
        _ = try server.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, 0, $3)",
            [.bytes(team.keychainID), .int64(Int64(e.generation)), .bytes(e.encoded)])
        _ = try server.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3", [.int64(Int64(e.generation)), .bytes(e.hash), .bytes(team.keychainID)])
        let seen = failure { try writer.keychain.copyMatching(genp([kSecAttrService: "planted", kSecReturnData: true])) }
        #expect(seen?.status == errSecInvalidKeychain)
        #expect(seen?.message.contains("reader") == true)
    }

    /// Rows edited, replayed from an older version, or hidden.
    @Test func editedReplayedAndHiddenRowsAreDetected() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        try team.admin.keychain.add(genp([kSecAttrService: "a", kSecValueData: Data("v1".utf8)]))
        try team.admin.keychain.add(genp([kSecAttrService: "b", kSecValueData: Data("b".utf8)]))
        let server = try team.server()
        let old = try server.execute("SELECT item_id, row_version, wrapped_key, metadata, data FROM kc_items WHERE seq = (SELECT min(seq) FROM kc_items)")
        let id = try #require(old.bytes(0, 0))
        try team.admin.keychain.update(genp([kSecAttrService: "a"]), [kSecValueData: Data("v2".utf8)])
        #expect(try bob.keychain.copyMatching(genp([kSecAttrService: "a", kSecReturnData: true])) as? Data == Data("v2".utf8))
        // Replayed: the old version's columns put back.
        _ = try server.execute(
            "UPDATE kc_items SET row_version = $1, wrapped_key = $2, metadata = $3, data = $4 WHERE item_id = $5",
            [.int64(old.int64(0, 1) ?? 0), .bytes(old.bytes(0, 2) ?? []), .bytes(old.bytes(0, 3) ?? []), .bytes(old.bytes(0, 4) ?? []), .bytes(id)])
        let replayed = failure { try bob.keychain.copyMatching(genp([kSecAttrService: "a", kSecReturnData: true])) }
        #expect(replayed?.status == errSecDecode)
        #expect(failure { try team.reopen(bob.keys, as: "bob") }?.status == errSecDecode)
        // Edited: one byte of another row's metadata.
        let team2 = try TeamFixture()
        try team2.admin.keychain.add(genp([kSecAttrService: "x", kSecValueData: Data("x".utf8)]))
        _ = try team2.server().execute("UPDATE kc_items SET metadata = set_byte(metadata, 20, get_byte(metadata, 20) # 1)")
        #expect(status { try team2.admin.keychain.copyMatching(genp([kSecAttrService: "x", kSecReturnData: true])) } == errSecDecode)
        // Hidden: a row deleted.
        let team3 = try TeamFixture()
        try team3.admin.keychain.add(genp([kSecAttrService: "x", kSecValueData: Data("x".utf8)]))
        try team3.admin.keychain.add(genp([kSecAttrService: "y", kSecValueData: Data("y".utf8)]))
        _ = try team3.server().execute("DELETE FROM kc_items WHERE seq = (SELECT max(seq) FROM kc_items)")
        let hidden = failure { try team3.reopen(team3.admin.keys, as: "root-admin-again") }
        #expect(hidden?.status == errSecDecode)
        #expect(hidden?.message.contains("1 rows where the signed log counts 2") == true)
    }

    /// The server restored from an older dump (rollback), then diverging (fork).
    @Test func aRollbackAndAForkAreNamed() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        try team.admin.keychain.add(genp([kSecAttrService: "one", kSecValueData: Data("1".utf8)]))
        let server = try team.server()
        // The "dump": copies of every table.
        for t in ["kc_keychains", "kc_log", "kc_items", "kc_pairs", "kc_members", "kc_mk_wraps"] {
            _ = try server.execute("CREATE TABLE dump_\(t) AS TABLE \(t)")
        }
        try team.admin.keychain.add(genp([kSecAttrService: "two", kSecValueData: Data("2".utf8)]))
        #expect(try bob.keychain.itemCount() == 2)
        bob.keychain.lock()   // the checkpoint is written
        func restore() throws {
            for t in ["kc_keychains", "kc_log", "kc_items", "kc_pairs", "kc_members", "kc_mk_wraps"] {
                _ = try server.execute("DELETE FROM \(t)")
                _ = try server.execute("INSERT INTO \(t) OVERRIDING SYSTEM VALUE SELECT * FROM dump_\(t)")
            }
        }
        try restore()
        let rolledBack = failure { try team.reopen(bob.keys, as: "bob") }
        #expect(rolledBack?.status == errSecInvalidKeychain)
        #expect(rolledBack?.message.contains("rollback") == true)
        // A fork: from the restored state, the admin (who trusts its own fresh view) writes
        // another entry at the generation bob saw.
        let forkWriter = try team.reopen(team.admin.keys, as: "admin-fresh")
        try forkWriter.keychain.add(genp([kSecAttrService: "other-two", kSecValueData: Data("x".utf8)]))
        let forked = failure { try team.reopen(bob.keys, as: "bob") }
        #expect(forked?.status == errSecInvalidKeychain)
        #expect(forked?.message.contains("fork") == true)
    }

    /// A genesis rewritten to claim another (older) format no longer has the pinned id.
    @Test func aDowngradedGenesisIsAnotherKeychain() throws {
        let team = try TeamFixture()
        let server = try team.server()
        let g = try server.execute("SELECT genesis FROM kc_keychains")
        var bytes = try #require(g.bytes(0, 0))
        let labelLength = Int(bytes[0])
        bytes[1 + labelLength + 3] = 0   // format 1 -> 0
        _ = try server.execute("UPDATE kc_keychains SET genesis = $1", [.bytes(bytes)])
        let e = failure { try team.reopen(team.admin.keys, as: "admin-2") }
        #expect(e?.status == errSecInvalidKeychain)
        #expect(e?.message.contains("substituted") == true)
    }
}

/// A server that freezes the keychain at an old head: readers that limit staleness notice.
@Suite struct FreezeTests {
    @Test func aHeadOlderThanTheLimitIsAFreezeUntilAHeartbeat() throws {
        let team = try TeamFixture()
        let reader = try team.addMember("reader", role: .reader)
        reader.authority.maxStaleness = 1
        _ = try reader.keychain.itemCount()
        usleep(2_100_000)
        let frozen = failure { try reader.keychain.itemCount() }
        #expect(frozen?.status == errSecInvalidKeychain)
        #expect(frozen?.message.contains("freezing") == true)
        try team.admin.keychain.withTeamKeys { keys, adopt in try team.admin.authority.heartbeat(keys: keys, adopt: adopt) }
        #expect(try reader.keychain.itemCount() == 0)
    }
}
