import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// `Keychain.backup(to:)`: a consistent, checked, encrypted copy while others write.
@Suite struct BackupTests {
    @Test func aBackupWhileFourWritersAddHoldsEverythingBeforeIt() throws {
        let t = try TempKeychain()
        for i in 0..<20 {
            try t.keychain.add(genp([kSecAttrService: "before-\(i)", kSecValueData: Data("secret-before-\(i)".utf8)]))
        }
        var writers: [SpawnedChild] = []
        for p in 0..<4 {
            writers.append(try ConcurrencyTests.startLoadgen(t.path, prefix: "w\(p)", count: 60))
        }
        // Wait until the writers are adding, then take the backup in the middle of it.
        let deadline = Date().addingTimeInterval(20)
        while try t.keychain.itemCount() < 40, Date() < deadline { usleep(20_000) }
        let acknowledged =
            try t.keychain.copyMatching(genp([kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true]))
            as? [[String: Any]] ?? []
        let destination = t.directory + "/backup.keychain-db"
        let count = try t.keychain.backup(to: destination)
        // One self-contained file: no -wal or -shm beside it.
        #expect(!FileManager.default.fileExists(atPath: destination + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: destination + "-shm"))
        for process in writers {
            let out = try process.finish()
            #expect(out.status == 0, "\(out.stderr)")
        }
        #expect(count >= acknowledged.count)
        // The backup opens with the same password, passes every check, and holds every item
        // that was there before it started, with its secret.
        let copy = try Keychain.open(at: destination, password: try secure(TempKeychain.password))
        try copy.verify()
        #expect(try copy.itemCount() == count)
        for item in acknowledged {
            let service = try #require(item[kSecAttrService] as? String)
            let data = try copy.copyMatching(genp([kSecAttrService: service, kSecReturnData: true])) as? Data
            #expect(data == Data(("secret-" + service).utf8), "\(service)")
        }
        var st = stat()
        #expect(lstat(destination, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: t.directory).filter { $0.contains(".partial-") }
        #expect(leftovers.isEmpty)
    }

    @Test func anExistingDestinationIsReplacedOnlyOnRequest() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "one", kSecValueData: Data("1".utf8)]))
        let destination = t.directory + "/backup.keychain-db"
        #expect(FileManager.default.createFile(atPath: destination, contents: Data("precious".utf8), attributes: [.posixPermissions: 0o600]))
        let refused = #expect(throws: KeychainError.self) { try t.keychain.backup(to: destination) }
        #expect(refused?.status == errSecDuplicateKeychain)
        #expect(FileManager.default.contents(atPath: destination) == Data("precious".utf8))
        #expect(try t.keychain.backup(to: destination, replacing: true) == 1)
        #expect(try Keychain.open(at: destination, password: try secure(TempKeychain.password)).itemCount() == 1)
        // Never a folder, and never a locked keychain.
        try FileManager.default.createDirectory(atPath: t.directory + "/folder", withIntermediateDirectories: false)
        #expect(throws: KeychainError.self) { try t.keychain.backup(to: t.directory + "/folder", replacing: true) }
        t.keychain.lock()
        let locked = #expect(throws: KeychainError.self) { try t.keychain.backup(to: t.directory + "/other.keychain-db") }
        #expect(locked?.status == errSecInteractionNotAllowed)
        #expect(!FileManager.default.fileExists(atPath: t.directory + "/other.keychain-db"))
    }
}
