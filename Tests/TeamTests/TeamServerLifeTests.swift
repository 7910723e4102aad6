import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// The server's life seen from a team keychain: a restart in the middle of writes, and
/// what its logs and dumps hold. Each test has a cluster of its own.
@Suite struct TeamServerLifeTests {
    /// PostgreSQL restarted while four members write: every add reported done is there once,
    /// none reported failed is there, and the log verifies.
    @Test func aRestartMidRunLosesNothingAndDoublesNothing() throws {
        let cluster = TestPostgres.dedicated()
        let team = try TeamFixture(cluster: cluster)
        nonisolated(unsafe) let writers = try (0..<4).map { try team.addMember("w\($0)") }
        let done = Failures(), failed = Failures(), other = Failures()
        let restarted = Failures()
        DispatchQueue.concurrentPerform(iterations: 5) { w in
            if w == 4 {
                usleep(300_000)
                do { try cluster.restart(); restarted.append("ok") } catch { other.append("restart: \(error)") }
                return
            }
            for i in 0..<60 {
                let name = "w\(w)-\(i)"
                let s = status { try writers[w].keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: name, kSecValueData: Data(name.utf8)])) }
                switch s {
                case errSecSuccess: done.append(name)
                case errSecNotAvailable: failed.append(name)
                default: other.append("\(name): \(s)")
                }
                usleep(10_000)
            }
        }
        #expect(restarted.all == ["ok"], "\(other.all)")
        #expect(other.all.isEmpty, "\(other.all.prefix(5))")
        let verifier = try team.reopen(team.admin.keys, as: "verifier")
        let found =
            try verifier.keychain.copyMatching(genp([kSecAttrService: "svc", kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true]))
            as? [[String: Any]] ?? []
        let present = found.compactMap { $0[kSecAttrAccount] as? String }
        #expect(Set(present).count == present.count, "nothing doubled")
        #expect(
            Set(present) == Set(done.all),
            "present but reported failed: \(Set(present).subtracting(done.all).sorted().prefix(5)); reported done but missing: \(Set(done.all).subtracting(present).sorted().prefix(5))"
        )
        #expect(try verifier.keychain.check() == done.all.count)
        #expect(done.all.count >= 100, "the writers went on after the restart (\(done.all.count) done, \(failed.all.count) failed)")
    }

    /// With `log_statement=all`, the server's log and a `pg_dump` hold no secret and no
    /// attribute value: only ciphertext, blind indexes and public material.
    @Test func theServersLogAndDumpHoldNoSecretAndNoAttribute() throws {
        let cluster = TestPostgres.dedicated()
        _ = try cluster.psql("ALTER SYSTEM SET log_statement = 'all'", database: "postgres")
        _ = try cluster.psql("ALTER SYSTEM SET log_parameter_max_length = -1", database: "postgres")
        _ = try cluster.psql("SELECT pg_reload_conf()", database: "postgres")
        let team = try TeamFixture(cluster: cluster)
        let bob = try team.addMember("bob")
        let needles = ["needle-secret-9271", "needle-account-5513", "needle-service-3318", "needle-label-7741", "needle-comment-2209"]
        try team.admin.keychain.add(
            genp([
                kSecAttrService: needles[2], kSecAttrAccount: needles[1], kSecAttrLabel: needles[3],
                kSecAttrComment: needles[4], kSecValueData: Data(needles[0].utf8)
            ]))
        #expect(
            try bob.keychain.copyMatching(genp([kSecAttrService: needles[2], kSecAttrAccount: needles[1], kSecReturnData: true])) as? Data
                == Data(needles[0].utf8))
        try bob.keychain.update(genp([kSecAttrService: needles[2]]), [kSecValueData: Data((needles[0] + "-2").utf8)])
        let log = try cluster.serverLog()
        let dump = try cluster.dump(database: team.dsn)
        #expect(log.contains("INSERT INTO kc_items") || log.contains("kc_items"), "the log records the statements")
        #expect(dump.contains("kc_items"))
        for needle in needles {
            let hex = needle.utf8.map { String(format: "%02x", $0) }.joined()
            for (what, text) in [("server log", log), ("pg_dump", dump)] {
                #expect(!text.contains(needle) && !text.lowercased().contains(hex), "\(what) holds \(needle)")
            }
        }
    }
}
