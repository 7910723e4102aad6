import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// Several processes writing one keychain file at once lose nothing.
@Suite struct ConcurrencyTests {
    /// The `kc-loadgen` built beside this test bundle.
    static var loadgen: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kc-loadgen").path
    }

    /// Starts kc-loadgen adding `count` items named PREFIX-i to the keychain at `path`.
    static func startLoadgen(_ path: String, prefix: String, count: Int) throws -> SpawnedChild {
        try Spawn.start([loadgen, path, prefix, String(count)], environment: ["KC_PASSWORD": TempKeychain.password])
    }

    @Test func processesAddingAtOnceLoseNothing() throws {
        let t = try TempKeychain()
        let processes = 4, perProcess = 25
        var running: [SpawnedChild] = []
        for p in 0..<processes {
            running.append(try Self.startLoadgen(t.path, prefix: "p\(p)", count: perProcess))
        }
        // Meanwhile this process writes too.
        for i in 0..<perProcess {
            try t.keychain.add(genp([kSecAttrService: "main-\(i)", kSecAttrAccount: "load", kSecValueData: Data("secret-main-\(i)".utf8)]))
        }
        for process in running {
            let out = try process.finish()
            #expect(out.status == 0, "\(out.stderr)")
        }
        let total = (processes + 1) * perProcess
        #expect(try t.keychain.itemCount() == total)
        let reopened = try t.reopen()   // verifies count and accumulator
        let all = try #require(
            try reopened.copyMatching(
                genp([
                    kSecAttrAccount: "load", kSecMatchLimit: kSecMatchLimitAll,
                    kSecReturnAttributes: true, kSecReturnData: true
                ])) as? [[String: Any]])
        #expect(all.count == total)
        for item in all {
            let service = try #require(item[kSecAttrService] as? String)
            #expect(item[kSecValueData] as? Data == Data("secret-\(service)".utf8))
        }
        #expect(try t.sql("PRAGMA integrity_check").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }

    @Test func twoAddsOfTheSameItemOneWins() throws {
        let t = try TempKeychain()
        var statuses: [Int32] = []
        var running: [SpawnedChild] = []
        for _ in 0..<2 {
            running.append(try Self.startLoadgen(t.path, prefix: "same", count: 1))
        }
        for process in running {
            statuses.append(try process.finish().status)
        }
        #expect(statuses.sorted() == [0, 45], "one succeeds, the other is errSecDuplicateItem (exit 45)")
        #expect(try t.keychain.itemCount() == 1)
    }

    @Test func aWriterWithStaleKeysIsStopped() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "before"]))
        let other = try t.reopen()
        try other.rekey(newPassword: try secure("new password"), profile: .interactive)
        // The first keychain object still holds the old master key: it must not write rows
        // no one can read, and must lock itself.
        expectStatus(errSecInteractionNotAllowed) { try t.keychain.add(genp([kSecAttrService: "after"])) }
        #expect(!t.keychain.isUnlocked)
        #expect(try other.count(genp([kSecMatchLimit: kSecMatchLimitAll])) == 1)
        _ = try Keychain.open(at: t.path, password: try secure("new password"))
    }
}
