import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamStore

/// Each method of `TeamTables` against the test cluster, and that one keychain's rows are
/// never another's.
@Suite struct TeamTablesTests {
    static func tables(_ dsn: String, _ id: [UInt8]) throws -> TeamTables {
        let c = try PostgresConnection(dsn: dsn)
        try PostgresSchema.install(c)
        return TeamTables(connection: c, keychainID: id)
    }

    static func status(_ body: () throws -> Void) -> OSStatus? {
        do { try body() } catch let e as KeychainError { return e.status } catch { return nil }
        return 0
    }

    @Test func aKeychainIsCreatedOnceWithItsFirstEntry() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let t = try Self.tables(dsn, [UInt8](repeating: 1, count: 32))
        #expect(try t.head() == nil)
        #expect(try t.genesis() == nil)
        try t.createKeychain(genesis: [0x60], firstEntry: [0xE1, 0], head: [0x11, 0x22])
        #expect(try t.head() == TeamHead(generation: 1, keyGeneration: 1, head: [0x11, 0x22], schemaVersion: 1, minWriterVersion: 1))
        #expect(try t.genesis() == [0x60])
        #expect(try t.entries(after: 0, through: 1).map(\.entry) == [[0xE1, 0]])
        #expect(try t.entries(after: 0, kind: 1).map(\.generation) == [1])
        #expect(try t.entries(after: 0, kind: 0).isEmpty)
        #expect(Self.status { try t.createKeychain(genesis: [9], firstEntry: [9], head: [9]) } == errSecDuplicateKeychain)
        #expect(try t.head()?.head == [0x11, 0x22], "the refused create changed nothing")
        #expect(try TestPostgres.shared.psql("SELECT count(*) FROM kc_log", database: dsn) == "1\n")
    }

    @Test func claimAppendAndReadTheLog() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let t = try Self.tables(dsn, [UInt8](repeating: 2, count: 32))
        try t.createKeychain(genesis: [1], firstEntry: [1], head: [1])
        try t.connection.begin(readOnlySnapshot: false)
        #expect(try t.claim(expectedGeneration: 1))
        #expect(try !t.claim(expectedGeneration: 1), "the generation moved")
        try t.append(generation: 2, kind: 0, entry: [2, 2], newHead: [0xAA], keyGeneration: nil)
        try t.connection.commit()
        #expect(try t.head() == TeamHead(generation: 2, keyGeneration: 1, head: [0xAA], schemaVersion: 1, minWriterVersion: 1))
        #expect(try t.claim(expectedGeneration: 2))
        try t.append(generation: 3, kind: 1, entry: [3], newHead: [0xBB], keyGeneration: 2)
        #expect(try t.head()?.keyGeneration == 2)
        #expect(try t.head()?.generation == 3)
        let all = try t.entries(after: 0)
        #expect(all.map(\.generation) == [1, 2, 3])
        #expect(all.map(\.entry) == [[1], [2, 2], [3]])
        #expect(try t.entries(after: 1).map(\.generation) == [2, 3])
        #expect(try t.entries(after: 0, kind: 0).map(\.generation) == [2])
        #expect(try t.entries(after: 1, kind: 1).map(\.generation) == [3])
        #expect(try t.entries(after: 3).isEmpty)
        #expect(try t.entries(after: 3, through: 4).isEmpty)
        // An entry at a generation that has one is a duplicate, and moves nothing.
        #expect(Self.status { try t.append(generation: 3, kind: 0, entry: [9], newHead: [0xCC], keyGeneration: nil) } == errSecDuplicateItem)
        #expect(try t.head()?.head == [0xBB])
        #expect(try t.connection.execute("SELECT kind FROM kc_log WHERE generation = 3").int64(0, 0) == 1)
    }

    @Test func lockForAdminHoldsTheRowUntilTheTransactionEnds() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let id = [UInt8](repeating: 3, count: 32)
        let admin = try Self.tables(dsn, id)
        try admin.createKeychain(genesis: [1], firstEntry: [1], head: [1])
        try admin.connection.begin(readOnlySnapshot: false)
        #expect(try admin.lockForAdmin()?.generation == 1)
        // Another writer's claim waits for the lock: with a lock timeout it gives up.
        let writer = try Self.tables(dsn, id)
        try writer.connection.begin(readOnlySnapshot: false)
        try writer.connection.execute("SET LOCAL lock_timeout = '200ms'")
        #expect(Self.status { _ = try writer.claim(expectedGeneration: 1) } == errSecIO)
        #expect(writer.connection.lastSQLState == "55P03")
        writer.connection.rollback()
        admin.connection.rollback()
        #expect(try writer.claim(expectedGeneration: 1))
        #expect(try Self.tables(dsn, [UInt8](repeating: 4, count: 32)).lockForAdmin() == nil)
    }

    @Test func membersRequestsAndWraps() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let t = try Self.tables(dsn, [UInt8](repeating: 5, count: 32))
        let u = try Self.tables(dsn, [UInt8](repeating: 6, count: 32))
        try t.createKeychain(genesis: [1], firstEntry: [1], head: [1])
        try u.createKeychain(genesis: [2], firstEntry: [2], head: [2])

        try t.putMember([0xB], record: [1])
        try t.putMember([0xA], record: [2])
        try t.putMember([0xB], record: [3])
        try u.putMember([0xC], record: [4])
        #expect(try t.members().map(\.memberID) == [[0xA], [0xB]])
        #expect(try t.members().map(\.record) == [[2], [3]])
        try t.deleteMember([0xA])
        try t.deleteMember([0xFF])
        #expect(try t.members().map(\.memberID) == [[0xB]])
        #expect(try u.members().map(\.memberID) == [[0xC]])

        try t.putRequest(fingerprint: "7f3a-91c2", request: [1])
        try t.putRequest(fingerprint: "7f3a-91c2", request: [2])
        #expect(try t.request(fingerprint: "7f3a-91c2") == [2])
        #expect(try u.request(fingerprint: "7f3a-91c2") == nil)
        try t.deleteRequest(fingerprint: "7f3a-91c2")
        #expect(try t.request(fingerprint: "7f3a-91c2") == nil)

        try t.putWrap(keyGeneration: 1, memberID: [0xB], sealed: [1, 1], signature: [2, 2])
        try t.putWrap(keyGeneration: 2, memberID: [0xB], sealed: [3], signature: [4])
        try t.putWrap(keyGeneration: 2, memberID: [0xB], sealed: [5], signature: [6])
        try u.putWrap(keyGeneration: 1, memberID: [0xB], sealed: [7], signature: [8])
        #expect(try t.wrap(keyGeneration: 1, memberID: [0xB]).map { [$0.sealed, $0.signature] } == [[1, 1], [2, 2]])
        #expect(try t.wrap(keyGeneration: 2, memberID: [0xB]).map { [$0.sealed, $0.signature] } == [[5], [6]])
        #expect(try t.wrap(keyGeneration: 3, memberID: [0xB]) == nil)
        try t.deleteWraps(keyGeneration: 1)
        #expect(try t.wrap(keyGeneration: 1, memberID: [0xB]) == nil)
        #expect(try t.wrap(keyGeneration: 2, memberID: [0xB]) != nil)
        #expect(try u.wrap(keyGeneration: 1, memberID: [0xB]).map(\.sealed) == [7])
    }

    @Test func aMalformedHeadIsAnIOError() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let t = try Self.tables(dsn, [UInt8](repeating: 7, count: 32))
        try t.createKeychain(genesis: [1], firstEntry: [1], head: [1])
        // The hostile server: a negative generation is no generation kc wrote.
        try TestPostgres.shared.psql("UPDATE kc_keychains SET generation = -5", database: dsn)
        #expect(Self.status { _ = try t.head() } == errSecIO)
        try TestPostgres.shared.psql("UPDATE kc_keychains SET generation = 5, key_gen = 4294967296", database: dsn)
        #expect(Self.status { _ = try t.head() } == errSecIO)
    }
}
