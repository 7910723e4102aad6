import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// Writers racing on one team keychain (TEAM.md "Writes and concurrency"): eight members,
/// each with its own connection, add fifty items each; a race on one primary key lets
/// exactly one win.
@Suite struct ConcurrentTeamWriteTests {
    @Test func eightWritersTimesFiftyAddsLeaveFourHundredItemsAndALogThatVerifies() throws {
        let team = try TeamFixture()
        nonisolated(unsafe) let writers = try (0..<8).map { try team.addMember("writer-\($0)") }
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { w in
            for i in 0..<50 {
                do {
                    try writers[w].keychain.add(genp([kSecAttrService: "w\(w)", kSecAttrAccount: "i\(i)", kSecValueData: Data("secret-\(w)-\(i)".utf8)]))
                } catch {
                    failures.append("writer \(w) item \(i): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        #expect(try team.admin.keychain.check() == 400)
        let fresh = try team.reopen(team.admin.keys, as: "verifier")
        #expect(try fresh.keychain.itemCount() == 400)
        for w in writers { _ = try w.keychain.itemCount(); #expect(w.authority.headText == fresh.authority.headText) }
    }

    @Test func aRaceOnOnePrimaryKeyHasExactlyOneWinner() throws {
        let team = try TeamFixture()
        nonisolated(unsafe) let writers = try (0..<8).map { try team.addMember("racer-\($0)") }
        let statuses = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { w in
            let s = status { try writers[w].keychain.add(genp([kSecAttrService: "same", kSecAttrAccount: "key", kSecValueData: Data("from-\(w)".utf8)])) }
            statuses.append("\(s)")
        }
        #expect(statuses.all.filter { $0 == "\(errSecSuccess)" }.count == 1)
        #expect(statuses.all.filter { $0 == "\(errSecDuplicateItem)" }.count == 7)
        #expect(try team.admin.keychain.check() == 1)
    }
}

/// A thread-safe list of strings.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
