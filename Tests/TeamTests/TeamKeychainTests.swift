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
        let e = failure { try team.admin.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8),
                                                            kSecAttrAccessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly])) }
        #expect(e?.status == errSecParam)
        #expect(e?.message.contains("this-device-only") == true)
        try team.admin.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8), kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock]))
        #expect(try team.admin.keychain.itemCount() == 1)
    }

    @Test func removingAMemberReKeysWithoutTouchingSecretsCiphertexts() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        let carol = try team.addMember("carol-desktop")
        for i in 0..<20 {
            try team.admin.keychain.add(genp([kSecAttrService: "svc-\(i)", kSecAttrAccount: "a", kSecValueData: Data("secret-\(i)".utf8)]))
        }
        let server = try team.server()
        func dataColumns() throws -> [String: [UInt8]] {
            let r = try server.execute("SELECT item_id, data, wrapped_key FROM kc_items ORDER BY seq")
            var out: [String: [UInt8]] = [:]
            for i in 0..<r.rowCount { out[Hex.encode(r.bytes(i, 0) ?? [])] = (r.bytes(i, 1) ?? []) + [0xff] + (r.bytes(i, 2) ?? []) }
            return out
        }
        let before = try server.execute("SELECT item_id, data, wrapped_key FROM kc_items ORDER BY seq")
        _ = try dataColumns()
        try TeamAdmin.remove(team.admin.opened, memberName: "bob-laptop")
        let after = try server.execute("SELECT item_id, data, wrapped_key FROM kc_items ORDER BY seq")
        #expect(before.rowCount == 20 && after.rowCount == 20)
        for i in 0..<after.rowCount {
            #expect(before.bytes(i, 0) == after.bytes(i, 0))
            #expect(before.bytes(i, 1) == after.bytes(i, 1), "the secret's ciphertext is unchanged by the re-key")
            #expect(before.bytes(i, 2) != after.bytes(i, 2), "its data key is re-wrapped under the new master key")
        }
        // Carol goes on without a password: her open keychain adopts the new key.
        #expect(try carol.keychain.copyMatching(genp([kSecAttrService: "svc-7", kSecReturnData: true])) as? Data == Data("secret-7".utf8))
        try carol.keychain.add(genp([kSecAttrService: "after-rekey", kSecValueData: Data("new".utf8)]))
        // Bob's open keychain reads nothing new, and he opens no wrap of the new key.
        let e = failure { try bob.keychain.copyMatching(genp([kSecAttrService: "after-rekey", kSecReturnData: true])) }
        #expect(e?.status == errSecAuthFailed)
        #expect(e?.message.contains("removed") == true)
        let reopened = failure { try team.reopen(bob.keys, as: "bob-laptop") }
        #expect(reopened?.status == errSecAuthFailed)
        let wraps = try server.execute("SELECT count(*) FROM kc_mk_wraps WHERE member_id = $1", [.bytes(bob.keys.memberID)])
        #expect(wraps.int64(0, 0) == 0, "no wrap of any key generation is left for the removed member")
        #expect(try team.admin.keychain.check() == 21)
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
