import Foundation
import Testing
@testable import KeychainCore

/// The record of generations seen (`SeenGenerations`), on a real file in a test folder: it
/// only rises unless a password accepts a file, a backup accepted at its own path lowers
/// only its own floor, a keychain moved away and back keeps the highest, every change merges
/// with what the file holds (two agents of one home), the file stays bounded, and a record
/// that cannot be used is refused and left as it is (found attacking the rollback guard: a
/// 0644 record was ignored, then replaced by a lower one; a path's stale record let an older
/// copy in; a record that grew past its size limit refused every slot for good).
@Suite struct SeenGenerationsTests {
    let folder: String
    var file: String { folder + "/state/kc/seen-generations" }
    let id = Array(repeating: UInt8(0xAB), count: 16)
    let other = Array(repeating: UInt8(0x01), count: 16)

    init() throws {
        folder = NSTemporaryDirectory() + "/kc-seen-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    @Test func itRisesUnlessAPasswordAcceptsAndEachPathKeepsItsOwn() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == nil)
        try SeenGenerations.record(id, at: "/k/live", 17, file: file)
        try SeenGenerations.record(id, at: "/k/live", 9, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 17, "never lowered without a password")
        // Two agents of one home: the other's record is merged, not overwritten.
        try SeenGenerations.record(other, at: "/k/other", 3, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 17)
        // A backup (same id) accepted with its password lowers its own record only.
        try SeenGenerations.record(id, at: "/k/backup", 15, accepting: true, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 17)
        #expect(try SeenGenerations.floor(id, at: "/k/backup", file: file) == 15)
        #expect(try SeenGenerations.floor(id, at: "/elsewhere/copy", file: file) == 17, "a new path: the id's highest")
        // The live file written past the highest: the backup's acceptance stays its own.
        try SeenGenerations.record(id, at: "/k/live", 18, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/backup", file: file) == 15)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 18)
        // A restore the user chose, at the same path: accepted.
        try SeenGenerations.record(id, at: "/k/live", 12, accepting: true, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 12)
        // Another backup opened with its password keeps the live file's acceptance (found
        // checking the fix: one acceptance per keychain made the restored live file's slot
        // refuse it).
        try SeenGenerations.record(id, at: "/k/older", 4, accepting: true, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 12)
        #expect(try SeenGenerations.floor(id, at: "/k/older", file: file) == 4)
        #expect(throws: KeychainError.self) { try SeenGenerations.refuseOlder(id, at: "/k/live", 11, file: file) }
        try SeenGenerations.refuseOlder(id, at: "/k/live", 12, file: file)
        // Written there past the highest, the live file's floor is the highest again.
        try SeenGenerations.record(id, at: "/k/live", 19, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/live", file: file) == 19)
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    /// A keychain moved away, written there, and moved back: its old path's stale record is
    /// not its floor (the third attack review put an older copy at the old path and it
    /// opened).
    @Test func aKeychainMovedAwayAndBackKeepsItsHighest() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SeenGenerations.record(id, at: "/k/k.kc", 24, file: file)
        try SeenGenerations.record(id, at: "/k/m.kc", 27, file: file)
        #expect(try SeenGenerations.floor(id, at: "/k/k.kc", file: file) == 27)
    }

    /// The record keeps the keychains last changed, at most `maximumKeychains`, and stays
    /// readable however many keychains an account opens (temporary ones in CI included).
    @Test func theRecordStaysBoundedAndReadable() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "/" + String(repeating: "d", count: 200) + "/k.keychain-db"
        for n in 0..<(SeenGenerations.maximumKeychains + 40) {
            let other = (0..<16).map { UInt8(truncatingIfNeeded: n >> ($0 % 2 * 8)) ^ UInt8($0) }
            try SeenGenerations.record(other, at: path, 5, file: file)
            try SeenGenerations.record(other, at: path + ".bak", 3, accepting: true, file: file)
        }
        try SeenGenerations.record(id, at: path, 9, file: file)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == SeenGenerations.maximumKeychains, "\(lines.count) lines")
        #expect(try SeenGenerations.floor(id, at: path, file: file) == 9)
        try SeenGenerations.refuseOlder(id, at: path, 9, file: file)
    }

    /// A keychain only unlocked, never written, is marked used at its unlock (at most once a
    /// day), so the keychains changed since do not push it out first.
    @Test func anUnlockMarksAKeychainUsed() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/state/kc", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data((Hex.encode(id) + " 7 0\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(chmod(file, 0o600) == 0)
        try SeenGenerations.record(id, at: "/k/live", 7, file: file)
        #expect(try String(contentsOfFile: file, encoding: .utf8).hasSuffix(" 7 0\n"), "nothing changed: nothing written")
        try SeenGenerations.record(id, at: "/k/live", 7, unlocking: true, file: file)
        let used = try String(contentsOfFile: file, encoding: .utf8).split(separator: " ").last.flatMap { UInt64($0.dropLast()) } ?? 0
        #expect(used > 1_700_000_000, "marked used: \(used)")
    }

    @Test func aRecordThatCannotBeUsedIsRefusedAndLeftAsItIs() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SeenGenerations.record(id, at: "/k/live", 6, file: file)
        #expect(chmod(file, 0o644) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(throws: KeychainError.self) { try SeenGenerations.refuseOlder(id, at: "/k/live", 5, file: file) }
        #expect(throws: KeychainError.self) { try SeenGenerations.refuseOlder(id, at: "/k/live", 9, file: file) }
        #expect(throws: KeychainError.self) { try SeenGenerations.record(id, at: "/k/live", 5, accepting: true, file: file) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "not replaced")
        #expect(chmod(file, 0o600) == 0)
        try Data("not a record\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(chmod(file, 0o600) == 0)
        #expect(throws: KeychainError.self) { try SeenGenerations.refuseOlder(id, at: "/k/live", 9, file: file) }
    }
}
