import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A team keychain used as members use it: writes by one member read by another, roles,
/// re-keying on removal, and the log verifying throughout. Real PostgreSQL, real libsodium.
@Suite struct TeamKeychainTests {
    @Test func aWriteByOneMemberIsReadByAnother() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        try team.admin.keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecValueData: Data("s3cret".utf8)]))
        let read = try bob.keychain.copyMatching(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecReturnData: true]))
        #expect(read as? Data == Data("s3cret".utf8))
        try bob.keychain.update(genp([kSecAttrService: "deploy"]), [kSecValueData: Data("rotated".utf8)])
        let again = try team.admin.keychain.copyMatching(genp([kSecAttrService: "deploy", kSecReturnData: true]))
        #expect(again as? Data == Data("rotated".utf8))
        #expect(try team.admin.keychain.delete(genp([kSecAttrService: "deploy"])) == 1)
        #expect(status { try bob.keychain.copyMatching(genp([kSecAttrService: "deploy"])) } == errSecItemNotFound)
        // Both views end at the same verified head, and a full check passes.
        _ = try bob.keychain.itemCount()
        #expect(bob.authority.headText == team.admin.authority.headText)
        #expect(try bob.keychain.check() == 0)
    }

    @Test func aReadersWriteIsReadOnlyAndLeavesNothing() throws {
        let team = try TeamFixture()
        let reader = try team.addMember("ci-reader", role: .reader)
        try team.admin.keychain.add(genp([kSecAttrService: "db", kSecValueData: Data("pw".utf8)]))
        #expect(try reader.keychain.copyMatching(genp([kSecAttrService: "db", kSecReturnData: true])) as? Data == Data("pw".utf8))
        let before = reader.authority.headText
        let e = failure { try reader.keychain.add(genp([kSecAttrService: "x", kSecValueData: Data("y".utf8)])) }
        #expect(e?.status == errSecReadOnly)
        #expect(status { try reader.keychain.update(genp([kSecAttrService: "db"]), [kSecValueData: Data("z".utf8)]) } == errSecReadOnly)
        #expect(status { try reader.keychain.delete(genp([kSecAttrService: "db"])) } == errSecReadOnly)
        _ = try reader.keychain.itemCount()
        #expect(reader.authority.headText == before, "a refused write moves nothing")
        #expect(try team.admin.keychain.itemCount() == 1)
    }

    @Test func thisDeviceOnlyAndPresenceItemsAreRefused() throws {
        let team = try TeamFixture()
        let e = failure {
            try team.admin.keychain.add(
                genp([
                    kSecAttrService: "s", kSecValueData: Data("x".utf8),
                    kSecAttrAccessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
                ]))
        }
        #expect(e?.status == errSecParam)
        #expect(e?.message.contains("this-device-only") == true)
        try team.admin.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8), kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock]))
        #expect(try team.admin.keychain.itemCount() == 1)
    }

    /// The items of the re-key test: generic passwords with many attributes (every third
    /// with Secret Service pairs, every fifth of another protection class) and internet
    /// passwords, more than one re-key batch (`TeamAuthority.resealBatch`) in all.
    static func rekeyItems() -> [[String: Any]] {
        let generic: [[String: Any]] = (0..<3_000).map { i in
            var q = genp([
                kSecAttrService: "svc-\(i)", kSecAttrAccount: "acct-\(i)", kSecAttrLabel: "label \(i)",
                kSecAttrComment: "comment \(i)", kSecAttrDescription: "kind \(i % 4)", kSecAttrGeneric: Data("g\(i)".utf8),
                kSecValueData: Data("secret-\(i)".utf8)
            ])
            if i % 3 == 0 { q[kcAttrSecretServiceAttributes] = ["xdg:schema": "org.test.rekey", "user": "u-\(i)", "bucket": "\(i % 7)"] }
            if i % 5 == 0 { q[kSecAttrAccessible] = kSecAttrAccessibleAfterFirstUnlock }
            return q
        }
        let internet: [[String: Any]] = (0..<1_500).map { i in
            [
                kSecClass: kSecClassInternetPassword, kSecAttrServer: "host-\(i).example", kSecAttrAccount: "user-\(i)",
                kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecAttrPort: 8000 + i % 100, kSecAttrPath: "/p/\(i)",
                kSecAttrSecurityDomain: "realm-\(i % 9)", kSecAttrLabel: "site \(i)", kSecValueData: Data("web-\(i)".utf8)
            ]
        }
        return generic + internet
    }

    /// Every item of `keychain` with its attributes and secret, one canonical line each, sorted.
    static func everything(_ keychain: Keychain) throws -> [String] {
        var lines: [String] = []
        for cls in [kSecClassGenericPassword, kSecClassInternetPassword] {
            let all = try keychain.copyMatching([kSecClass: cls, kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true, kSecReturnData: true])
            for item in all as? [[String: Any]] ?? [] {
                lines.append(
                    item.keys.sorted().map { key in
                        let v = item[key]
                        switch v {
                        case let d as Data: return "\(key)=\(Hex.encode(Array(d)))"
                        case let m as [String: String]: return "\(key)={\(m.keys.sorted().map { "\($0):\(m[$0] ?? "")" }.joined(separator: ","))}"
                        default: return "\(key)=\(v.map { "\($0)" } ?? "nil")"
                        }
                    }.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    @Test func removingAMemberReKeysWithoutTouchingSecretsCiphertexts() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        let carol = try team.addMember("carol-desktop")
        let items = Self.rekeyItems()
        #expect(try team.admin.keychain.addAll(items) == items.count)
        #expect(items.count > TeamAuthority.resealBatch, "the re-key writes more than one batch")
        let server = try team.server()
        func columns() throws -> PGResult {
            try server.execute("SELECT item_id, data, wrapped_key, metadata, pk, i_acct, row_version FROM kc_items ORDER BY seq")
        }
        /// The pair rows, and their distinct fingerprints (items share pairs).
        func pairs() throws -> (rows: Int, fingerprints: Set<[UInt8]>) {
            let r = try server.execute("SELECT fp FROM kc_pairs ORDER BY fp")
            return (r.rowCount, Set((0..<r.rowCount).compactMap { r.bytes($0, 0) }))
        }
        let before = try columns(), pairsBefore = try pairs()
        #expect(pairsBefore.rows == 1_000 * 3, "three pairs on every third generic password")
        let seen = try Self.everything(carol.keychain)
        #expect(seen.count == items.count)
        try TeamAdmin.remove(team.admin.opened, memberName: "bob-laptop")
        let after = try columns(), pairsAfter = try pairs()
        #expect(before.rowCount == items.count && after.rowCount == items.count)
        var rowVersions = Set<Int64>()
        for i in 0..<after.rowCount {
            #expect(before.bytes(i, 0) == after.bytes(i, 0))
            #expect(before.bytes(i, 1) == after.bytes(i, 1), "the secret's ciphertext is unchanged by the re-key")
            #expect(before.bytes(i, 2) != after.bytes(i, 2), "its data key is re-wrapped under the new master key")
            #expect(before.bytes(i, 3) != after.bytes(i, 3), "its metadata is re-sealed")
            #expect(before.bytes(i, 4) != after.bytes(i, 4) && before.bytes(i, 5) != after.bytes(i, 5), "its blind indexes are keyed anew")
            rowVersions.insert(after.int64(i, 6) ?? -1)
        }
        #expect(rowVersions.count == 1, "every row carries the re-key's generation")
        #expect(pairsAfter.rows == pairsBefore.rows, "every pair row is written again")
        #expect(
            pairsAfter.fingerprints.count == pairsBefore.fingerprints.count && pairsAfter.fingerprints.isDisjoint(with: pairsBefore.fingerprints),
            "every pair fingerprint is keyed anew")
        // Every member reads every item, attribute and secret as before, and finds items by
        // their indexed attributes and pairs (the new fingerprints).
        #expect(try Self.everything(carol.keychain) == seen)
        #expect(try Self.everything(team.admin.keychain) == seen)
        #expect(
            try carol.keychain.copyMatching(genp([kSecAttrService: "svc-2999", kSecAttrAccount: "acct-2999", kSecReturnData: true])) as? Data
                == Data("secret-2999".utf8))
        let byPairs = try carol.keychain.copyMatching(genp([kcAttrSecretServiceAttributes: ["user": "u-2997"], kSecReturnData: true]))
        #expect(byPairs as? Data == Data("secret-2997".utf8))
        let bucket = try carol.keychain.copyMatching(
            genp([kcAttrSecretServiceAttributes: ["bucket": "3"], kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true]))
        let inBucket: Int = (0..<3_000).filter { i in i % 3 == 0 && i % 7 == 3 }.count
        let found: Int = (bucket as? [[String: Any]])?.count ?? 0
        #expect(found == inBucket)
        #expect(
            try carol.keychain.copyMatching([kSecClass: kSecClassInternetPassword, kSecAttrServer: "host-1499.example", kSecReturnData: true]) as? Data
                == Data("web-1499".utf8))
        // Carol goes on without a password: her open keychain adopts the new key.
        try carol.keychain.add(genp([kSecAttrService: "after-rekey", kSecValueData: Data("new".utf8)]))
        // Bob's open keychain reads nothing new, and he opens no wrap of the new key.
        let e = failure { try bob.keychain.copyMatching(genp([kSecAttrService: "after-rekey", kSecReturnData: true])) }
        #expect(e?.status == errSecRestrictedAPI)
        #expect(e?.message.contains("removed") == true)
        let reopened = failure { try team.reopen(bob.keys, as: "bob-laptop") }
        #expect(reopened?.status == errSecRestrictedAPI)
        let wraps = try server.execute("SELECT count(*) FROM kc_mk_wraps WHERE member_id = $1", [.bytes(bob.keys.memberID)])
        #expect(wraps.int64(0, 0) == 0, "no wrap of any key generation is left for the removed member")
        // The whole check (kc team verify's) passes, and a fresh open verifies from the genesis.
        #expect(try team.admin.keychain.check() == items.count + 1)
        let fresh = try team.reopen(carol.keys, as: "carol-desktop")
        #expect(try fresh.keychain.itemCount() == items.count + 1)
        #expect(fresh.authority.headText == team.admin.authority.headText)
    }

    @Test func aMemberReopeningCatchesUpFromItsCheckpoint() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob")
        try bob.keychain.add(genp([kSecAttrService: "one", kSecValueData: Data("1".utf8)]))
        try team.admin.keychain.add(genp([kSecAttrService: "two", kSecValueData: Data("2".utf8)]))
        bob.keychain.lock()
        let again = try team.reopen(bob.keys, as: "bob")
        #expect(try again.keychain.itemCount() == 2)
        #expect(again.authority.headText == team.admin.authority.headText)
    }
}
