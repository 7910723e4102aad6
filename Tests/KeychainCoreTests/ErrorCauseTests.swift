import Foundation
import Testing
@testable import KeychainCore

/// `KeychainError.cause` keeps what the layer below said (the SQLite result code, the
/// errno) for diagnostics, without changing the message users see or error equality.
@Suite struct ErrorCauseTests {
    /// A keychain whose second page is overwritten: SQLite reports it malformed.
    static func damaged() throws -> String {
        let path = try TempKeychain.makeDirectory() + "/damaged.keychain-db"
        do {   // closed at the end of the scope: everything is in the main file
            let keychain = try Keychain.create(at: path, password: try secure(TempKeychain.password), profile: .interactive)
            try keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "svc", kSecValueData: Data("x".utf8)])
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 4096))
        try handle.close()
        return path
    }

    @Test func anSQLiteFailureKeepsItsResultCode() throws {
        let path = try Self.damaged()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let error = try #require(throws: KeychainError.self) { try Keychain.open(at: path, password: try secure(TempKeychain.password)) }
        #expect(error.status == errSecDecode)
        guard case .sqlite(let code, let message)? = error.cause else {
            Issue.record("no SQLite cause: \(error)")
            return
        }
        #expect(code & 0xFF == 11, "SQLITE_CORRUPT")
        #expect(message.contains("malformed"))
        #expect(!error.message.contains("result code"), "the user's message stays as it was")
        // Equality is what users see: the cause does not take part.
        var other = error
        other.cause = nil
        #expect(other == error)
    }

    @Test func aSystemCallFailureKeepsItsErrno() throws {
        // A keychain file that exists is refused by open(O_EXCL)… the path's folder is a file here.
        let t = try TempKeychain()
        let error = try #require(throws: KeychainError.self) {
            try Keychain.create(at: t.path + "/inner.keychain-db", password: try secure("pw"), profile: .interactive)
        }
        #expect(error.cause == .errno(ENOTDIR), "\(error) \(String(describing: error.cause))")
    }
}
