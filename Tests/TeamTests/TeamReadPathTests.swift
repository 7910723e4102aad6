import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A team read outside a transaction (`TeamAuthority.read`): one statement reads the head
/// with the rows when nothing was written since the last read, one more fetches the
/// entries written since; a read that needs a snapshot (a re-key to scan, the state alone)
/// is done in one, and reads racing writers never see a row the view does not vouch for.
/// Real PostgreSQL, counted statements.
@Suite struct TeamReadPathTests {
    /// Statements `member`'s connection sends while `body` runs.
    private func statements(_ member: TeamFixture.Member, _ body: () throws -> Void) rethrows -> Int {
        let before = member.authority.store.connection.statementsSent
        try body()
        return member.authority.store.connection.statementsSent - before
    }

    private func secret(_ member: TeamFixture.Member, _ service: String) throws -> String? {
        let data = try member.keychain.copyMatching(genp([kSecAttrService: service, kSecAttrAccount: "ci", kSecReturnData: true])) as? Data
        return data.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aReadIsOneStatementAndACatchUpOneMore() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        try team.admin.keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecValueData: Data("v1".utf8)]))
        // The first reads prepare the statements (a prepare is a statement too).
        #expect(try secret(bob, "deploy") == "v1")
        try team.admin.keychain.update(genp([kSecAttrService: "deploy"]), [kSecValueData: Data("v2".utf8)])
        #expect(try secret(bob, "deploy") == "v2")

        var value: String?
        #expect(try statements(bob) { value = try secret(bob, "deploy") } == 1, "nothing new: the head and the rows in one statement")
        #expect(value == "v2")
        // Another shape of lookup (by service alone): prepared on first use, then one statement.
        let absent = { status { try bob.keychain.copyMatching(genp([kSecAttrService: "absent"])) } }
        #expect(absent() == errSecItemNotFound)
        var missing: OSStatus = 0
        #expect(statements(bob) { missing = absent() } == 1)
        #expect(missing == errSecItemNotFound)

        try team.admin.keychain.update(genp([kSecAttrService: "deploy"]), [kSecValueData: Data("v3".utf8)])
        try team.admin.keychain.add(genp([kSecAttrService: "other", kSecAttrAccount: "ci", kSecValueData: Data("o".utf8)]))
        #expect(try statements(bob) { value = try secret(bob, "deploy") } == 2, "two entries written since: one statement more")
        #expect(value == "v3")
        #expect(bob.authority.headText == team.admin.authority.headText)
        #expect(try statements(bob) { value = try secret(bob, "other") } == 1)
        #expect(value == "o")
    }

    @Test func aReadThatMeetsAReKeyIsDoneInASnapshotAndAdoptsTheNewKey() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        let carol = try team.addMember("carol-desktop")
        for i in 0..<5 {
            try team.admin.keychain.add(genp([kSecAttrService: "svc-\(i)", kSecAttrAccount: "ci", kSecValueData: Data("secret-\(i)".utf8)]))
        }
        #expect(try secret(carol, "svc-0") == "secret-0")
        let keyGeneration = carol.authority.keyGeneration
        try TeamAdmin.remove(team.admin.opened, memberName: "bob-laptop")
        // Not one statement: the re-key's scan of every row needs the rows as of its head.
        var value: String?
        #expect(try statements(carol) { value = try secret(carol, "svc-3") } > 2)
        #expect(value == "secret-3")
        #expect(carol.authority.keyGeneration == keyGeneration + 1)
        #expect(try statements(carol) { value = try secret(carol, "svc-4") } == 1, "then back to one statement")
        #expect(value == "secret-4")
        #expect(status { try bob.keychain.copyMatching(genp([kSecAttrService: "svc-0", kSecReturnData: true])) } == errSecRestrictedAPI)
    }

    @Test func aReadOfTheStateAloneSeesOtherMembersWrites() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        #expect(try bob.keychain.itemCount() == 0)
        try team.admin.keychain.add(genp([kSecAttrService: "a", kSecValueData: Data("x".utf8)]))
        try team.admin.keychain.add(genp([kSecAttrService: "b", kSecValueData: Data("y".utf8)]))
        #expect(try bob.keychain.itemCount() == 2, "a read that runs no lookup is done in a snapshot, after a catch-up")
        #expect(try bob.keychain.count(genp([:])) == 2)
    }

    /// A catch-up that applied an entry and then met a forged one leaves the view as it
    /// was (the ledger's rows are journalled, not copied): once the server shows the genuine
    /// log again, the same entries apply cleanly.
    @Test func aCatchUpThatFailsHalfwayLeavesTheLedgerAsItWas() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop")
        try team.admin.keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecValueData: Data("v1".utf8)]))
        #expect(try secret(bob, "deploy") == "v1")
        let before = bob.authority.headText
        try team.admin.keychain.update(genp([kSecAttrService: "deploy"]), [kSecValueData: Data("v2".utf8)])
        try team.admin.keychain.add(genp([kSecAttrService: "other", kSecAttrAccount: "ci", kSecValueData: Data("o".utf8)]))
        let last = Int64(team.admin.authority.generation)
        let server = try team.server()
        let where_ = "WHERE keychain_id = $1 AND generation = $2"
        guard let genuine = try server.execute("SELECT entry FROM kc_log \(where_)", [.bytes(team.keychainID), .int64(last)]).bytes(0, 0) else {
            Issue.record("no entry at \(last)")
            return
        }
        var forged = genuine
        forged[forged.count - 1] ^= 1
        try server.execute("UPDATE kc_log SET entry = $3 \(where_)", [.bytes(team.keychainID), .int64(last), .bytes(forged)])
        #expect(status { try bob.keychain.copyMatching(genp([kSecAttrService: "deploy", kSecReturnData: true])) } == errSecInvalidKeychain)
        #expect(bob.authority.headText == before)
        try server.execute("UPDATE kc_log SET entry = $3 \(where_)", [.bytes(team.keychainID), .int64(last), .bytes(genuine)])
        #expect(try secret(bob, "deploy") == "v2")
        #expect(try secret(bob, "other") == "o")
        #expect(try bob.keychain.check() == 2)
    }

    @Test func readsRacingAWriterSeeOnlyWhatTheLogVouchesFor() throws {
        let team = try TeamFixture()
        let bob = try team.addMember("bob-laptop", role: .reader)
        try team.admin.keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecValueData: Data("0".utf8)]))
        nonisolated(unsafe) let writer = team.admin
        let problems = Failures()
        let stop = Flag()
        let written = Thread {
            var n = 0
            while !stop.isSet {
                n += 1
                do {
                    try writer.keychain.update(genp([kSecAttrService: "deploy"]), [kSecValueData: Data("\(n)".utf8)])
                    try writer.keychain.add(genp([kSecAttrService: "churn-\(n)", kSecAttrAccount: "ci", kSecValueData: Data("c".utf8)]))
                    if n > 1 { _ = try writer.keychain.delete(genp([kSecAttrService: "churn-\(n - 1)"])) }
                } catch {
                    problems.append("writer: \(error)")
                    return
                }
            }
        }
        written.start()
        var last = -1
        let deadline = Date().addingTimeInterval(3)
        var reads = 0
        while Date() < deadline {
            do {
                guard let text = try secret(bob, "deploy"), let n = Int(text) else {
                    problems.append("read: no value")
                    break
                }
                if n < last { problems.append("read \(n) after \(last): went back") }
                last = n
                reads += 1
            } catch {
                problems.append("read: \(error)")
                break
            }
        }
        stop.set()
        while !written.isFinished { usleep(10_000) }
        #expect(problems.all.isEmpty, "\(problems.all.prefix(3))")
        #expect(reads > 10)
        #expect(last > 0, "the reader saw the writer's updates")
        #expect(try bob.keychain.check() == 2)
    }
}

/// A flag one thread sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
