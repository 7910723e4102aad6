import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A team keychain behind PgBouncer in transaction pooling mode (`docs/team.md`,
/// "PgBouncer"): members' statements go to whichever of two server connections is free, so
/// nothing may rely on session state (a statement prepared on one server connection is not
/// on the other). Readers and writers race through it; the log verifies and every member
/// ends at one head. Real PgBouncer (Debian's), real PostgreSQL.
@Suite struct TeamPgBouncerTests {
    @Test func membersBehindATransactionPoolReadWriteAndReKey() throws {
        let team = try TeamFixture()
        let bouncer = try TestPgBouncer.start(poolSize: 2)
        let pooled = bouncer.dsn(for: team.dsn)
        let names = ["w1", "w2", "r1", "r2"]
        var keys: [MemberKeys] = []
        for n in names {
            let k = try MemberKeys.generate()
            _ = try TeamAdmin.requestToJoin(JoinString(keychainID: team.keychainID, dsn: team.dsn), memberName: n, member: k)
            _ = try TeamAdmin.add(team.admin.opened, memberName: n, fingerprint: k.fingerprint, role: n.hasPrefix("w") ? .writer : .reader)
            keys.append(k)
        }
        nonisolated(unsafe) let members = try zip(names, keys).map { n, k in
            try TeamFixture.open(name: team.name, keychainID: team.keychainID, dsn: pooled, keys: k, folder: team.folder + "/pooled-" + n)
        }
        try members[0].keychain.add(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecValueData: Data("first".utf8)]))
        let problems = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { m in
            for i in 0..<30 {
                do {
                    if m < 2 {
                        try members[m].keychain.add(genp([kSecAttrService: "w\(m)-\(i)", kSecAttrAccount: "ci", kSecValueData: Data("s-\(m)-\(i)".utf8)]))
                    } else {
                        let v = try members[m].keychain.copyMatching(genp([kSecAttrService: "deploy", kSecAttrAccount: "ci", kSecReturnData: true]))
                        if v as? Data != Data("first".utf8) { problems.append("reader \(m): \(String(describing: v))") }
                        _ = try members[m].keychain.count(genp([kSecAttrAccount: "ci"]))
                    }
                } catch {
                    problems.append("member \(names[m]) step \(i): \(error)")
                }
            }
        }
        #expect(problems.all.isEmpty, "\(problems.all.prefix(3))")
        // Five clients on two server connections: some found a statement another prepared
        // (or missing), and went on unprepared.
        #expect(members.contains { !$0.authority.store.connection.preparing })
        // A re-key through the pool, then everyone reads on.
        let admin = try TeamFixture.open(
            name: team.name, keychainID: team.keychainID, dsn: pooled, keys: team.admin.keys, folder: team.folder + "/pooled-admin")
        try TeamAdmin.remove(admin, memberName: "r2")
        for m in members.prefix(3) {
            #expect(try m.keychain.copyMatching(genp([kSecAttrService: "w1-29", kSecReturnData: true])) as? Data == Data("s-1-29".utf8))
            #expect(try m.keychain.check() == 61)
        }
        #expect(status { try members[3].keychain.copyMatching(genp([kSecAttrService: "deploy", kSecReturnData: true])) } == errSecRestrictedAPI)
        #expect(members[0].authority.headText == members[2].authority.headText)
    }
}
