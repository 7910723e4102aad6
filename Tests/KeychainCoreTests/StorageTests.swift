import Foundation
import Testing
@testable import KeychainCore

/// The file on disk: modes, what it contains, and how kc treats files that are not
/// keychains.
@Suite struct StorageTests {
    @Test func nothingSecretOnDisk() throws {
        let t = try TempKeychain()
        let secret = "SECRET-\(UUID().uuidString)"
        let account = "ACCOUNT-\(UUID().uuidString)"
        let service = "SERVICE-\(UUID().uuidString)"
        let label = "LABEL-\(UUID().uuidString)"
        let comment = "COMMENT-\(UUID().uuidString)"
        try t.keychain.add(
            genp([
                kSecAttrService: service, kSecAttrAccount: account, kSecAttrLabel: label,
                kSecAttrComment: comment, kSecValueData: Data(secret.utf8)
            ]))
        try t.keychain.add([
            kSecClass: kSecClassInternetPassword, kSecAttrServer: service + ".example", kSecAttrAccount: account,
            kSecValueData: Data(secret.utf8)
        ])
        let newSecret = "NEWSECRET-\(UUID().uuidString)"
        try t.keychain.update(genp([kSecAttrService: service]), [kSecValueData: Data(newSecret.utf8)])
        let raw = t.rawBytes()
        #expect(raw.count > 4096)
        for needle in [secret, account, service, label, comment, newSecret, TempKeychain.password] {
            #expect(!contains(raw, Array(needle.utf8)), "\(needle.prefix(8))… is on disk in plaintext")
            #expect(!contains(raw, Array(needle.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
        }
        // Also after delete and a checkpoint (secure_delete zeroes freed pages).
        try t.keychain.delete(genp([kSecAttrService: service]))
        try t.keychain.store.compactLog()
        let after = t.rawBytes()
        for needle in [secret, account, service, newSecret] {
            #expect(!contains(after, Array(needle.utf8)))
        }
    }

    @Test func fileAndFolderModes() throws {
        let dir = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let old = umask(0o022)
        defer { umask(old) }
        let path = dir + "/nested/deeper/login.keychain-db"
        let k = try Keychain.create(at: path, password: try secure("pw"), profile: .interactive)
        try k.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        for file in [path, path + "-wal", path + "-shm"] {
            var st = stat()
            #expect(stat(file, &st) == 0, "\(file) exists")
            #expect(st.st_mode & 0o777 == 0o600, "\(file) is \(String(st.st_mode & 0o777, radix: 8))")
        }
        for folder in [dir + "/nested", dir + "/nested/deeper"] {
            var st = stat()
            #expect(stat(folder, &st) == 0)
            #expect(st.st_mode & 0o777 == 0o700)
        }
        var st = stat()
        _ = stat(path, &st)
        #expect(st.st_uid == geteuid())
    }

    @Test func walAndSettings() throws {
        let t = try TempKeychain()
        #expect(try t.sql("PRAGMA journal_mode").trimmingCharacters(in: .whitespacesAndNewlines) == "wal")
        #expect(try t.sql("PRAGMA user_version").trimmingCharacters(in: .whitespacesAndNewlines) == "5")
        #expect(try t.sql("PRAGMA application_id").trimmingCharacters(in: .whitespacesAndNewlines) == String(0x6B63_0001))
        #expect(try t.keychain.timeouts() == (900, 43200))
        try t.keychain.setTimeouts(idle: 60, maximum: 3600)
        #expect(try t.reopen().timeouts() == (60, 3600))
    }

    @Test func createRefusesAnExistingFile() throws {
        let t = try TempKeychain()
        let before = t.rawDigest()
        expectStatus(errSecDuplicateKeychain) { _ = try Keychain.create(at: t.path, password: try secure("x"), profile: .interactive) }
        #expect(t.rawDigest() == before)
        #expect(try t.reopen().itemCount() == 0)
    }

    @Test func missingKeychain() throws {
        let dir = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        expectStatus(errSecNoSuchKeychain) { _ = try Keychain.open(at: dir + "/none.keychain-db", password: try secure("x")) }
    }

    /// Files that are not kc keychains: a clear error, never a crash, never a rewrite.
    @Test(arguments: [
        ("empty", Data()),
        ("text", Data("hello, this is not a database\n".utf8)),
        ("random", Data((0..<8192).map { _ in UInt8.random(in: 0...255) })),
        ("sqlite header only", Data("SQLite format 3\u{0}".utf8))
    ])
    func notAKeychain(_ name: String, _ contents: Data) throws {
        let dir = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/\(name).keychain-db"
        #expect(FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]))
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("x")) }
        #expect(FileManager.default.contents(atPath: path).map { digest(Array($0)) } == digest(Array(contents)), "the file was not modified")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func anotherSQLiteDatabaseIsNotAKeychain() throws {
        let dir = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/other.db"
        try TempKeychain.run("/usr/bin/sqlite3", [path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"])
        chmod(path, 0o600)
        let before = FileManager.default.contents(atPath: path).map { digest(Array($0)) }
        expectStatus(errSecDecode) { _ = try Keychain.open(at: path, password: try secure("x")) }
        #expect(FileManager.default.contents(atPath: path).map { digest(Array($0)) } == before)
    }

    @Test func truncatedKeychain() throws {
        let t = try TempKeychain()
        for i in 0..<20 { try t.keychain.add(genp([kSecAttrService: "s\(i)", kSecValueData: Data(count: 3000)])) }
        try t.keychain.store.compactLog()
        let full = try #require(FileManager.default.contents(atPath: t.path))
        for cut in [full.count / 2, 4096, 100, 10] {
            let dir = try TempKeychain.makeDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = dir + "/cut.keychain-db"
            FileManager.default.createFile(atPath: path, contents: full.prefix(cut), attributes: [.posixPermissions: 0o600])
            do {
                let k = try Keychain.open(at: path, password: try secure(TempKeychain.password))
                // If the header survived, the missing rows must be noticed.
                _ = try k.copyMatching(genp([kSecMatchLimit: kSecMatchLimitAll, kSecReturnData: true]))
                Issue.record("a keychain cut to \(cut) bytes opened and read without error")
            } catch let error as KeychainError {
                #expect([errSecDecode, errSecAuthFailed].contains(error.status), "cut at \(cut): \(error)")
            }
        }
    }

    @Test func newerSchemaIsRefusedUntouched() throws {
        let t = try TempKeychain()
        try t.keychain.store.compactLog()
        try t.sql("PRAGMA user_version = 99")
        let main = { digest(Array(FileManager.default.contents(atPath: t.path) ?? Data())) }
        let before = main()
        expectStatus(errSecWrongSecVersion) { _ = try t.reopen() }
        #expect(main() == before, "the main file is byte for byte the same")
    }

    @Test func unsafeFilesAreRefused() throws {
        let t = try TempKeychain()
        chmod(t.path, 0o644)
        expectStatus(errSecParam, "group/other-readable file") { _ = try t.reopen() }
        chmod(t.path, 0o600)
        chmod(t.directory, 0o777)
        expectStatus(errSecParam, "folder writable by others") { _ = try t.reopen() }
        chmod(t.directory, 0o700)
        let link = t.directory + "/link.keychain-db"
        symlink(t.path, link)
        expectStatus(errSecParam, "symbolic link") { _ = try Keychain.open(at: link, password: try secure(TempKeychain.password)) }
        _ = try t.reopen()
    }

    /// Security review, F7: opening checked only the main file's mode; a group/other-readable
    /// -wal (which holds recent pages, including old master-key wraps) was accepted silently.
    @Test func aWorldReadableWALIsRefused() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        #expect(chmod(t.path + "-wal", 0o644) == 0)
        expectStatus(errSecParam, "a -wal readable by others") { _ = try t.reopen() }
    }
}
