import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// A throwaway keychain in a fresh 0700 folder, made with the INTERACTIVE KDF profile so
/// tests stay fast. The folder is removed when the value is deinitialised.
final class TempKeychain {
    static let password = "correct horse battery staple"
    let directory: String
    let path: String
    let keychain: Keychain

    init(password: String = TempKeychain.password, name: String = "test.keychain-db") throws {
        directory = try Self.makeDirectory()
        path = directory + "/" + name
        keychain = try Keychain.create(at: path, password: try secure(password), profile: .interactive)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Opens the same file again, as another process would.
    func reopen(password: String = TempKeychain.password) throws -> Keychain {
        try Keychain.open(at: path, password: try secure(password))
    }

    static func makeDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/kc-test-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        return String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
    }

    /// Every byte of the keychain file and its -wal and -shm.
    func rawBytes() -> [UInt8] {
        ["", "-wal", "-shm"].flatMap { suffix in
            (FileManager.default.contents(atPath: path + suffix)).map { Array($0) } ?? []
        }
    }

    /// A short digest of the raw bytes, for comparing files without printing them.
    func rawDigest() -> String { digest(rawBytes()) }

    /// Runs SQL on the file with the sqlite3 library directly, as an attacker holding the
    /// file would (via the `sqlite3` command-line tool, so no kc code is involved).
    @discardableResult
    func sql(_ statement: String) throws -> String {
        try Self.run("/usr/bin/sqlite3", [path, statement])
    }

    /// Runs `statement` while the index `index` is hidden from SQLite (its schema entry
    /// removed with `writable_schema`, then put back as it was): the attacker's way to edit
    /// a table without its index following, leaving a stale index.
    func sqlWithIndexHidden(_ index: String, _ statement: String) throws {
        let entry = try sql("SELECT quote(type), quote(name), quote(tbl_name), rootpage, quote(sql) FROM sqlite_schema WHERE name = '\(index)'")
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").joined(separator: ", ")
        try sql("PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = '\(index)'")
        try sql(statement)
        try sql("PRAGMA writable_schema = ON; INSERT INTO sqlite_schema VALUES (\(entry))")
    }

    /// Runs a tool to the end through `Spawn` (close-on-exec pipes, a deadline).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let out = try Spawn.run([executable] + arguments, environment: environment ?? ProcessInfo.processInfo.environment)
        guard out.status == 0 else { throw ProcessFailure(status: out.status, stderr: out.stderr) }
        return out.stdout
    }
}

struct ProcessFailure: Error, CustomStringConvertible {
    let status: Int32
    let stderr: String
    var description: String { "exit \(status): \(stderr)" }
}

func secure(_ s: String) throws -> SecureBytes {
    try SecureBytes(copying: Array(s.utf8))
}

/// Expects `body` to throw a KeychainError with `status`.
func expectStatus(_ status: OSStatus, _ why: String = "", sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected status \(status), but the call succeeded. \(why)", sourceLocation: sourceLocation)
    } catch let error as KeychainError {
        #expect(error.status == status, "\(error.message). \(why)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected KeychainError \(status), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var i = 0
    let last = haystack.count - needle.count
    while i <= last {
        if haystack[i] == first && Array(haystack[i..<i + needle.count]) == needle { return true }
        i += 1
    }
    return false
}

func genp(_ extra: [String: Any] = [:]) -> [String: Any] {
    var q: [String: Any] = [kSecClass: kSecClassGenericPassword]
    for (k, v) in extra { q[k] = v }
    return q
}

/// A short, printable digest of bytes (FNV-1a 64), for comparisons in expectations.
func digest(_ bytes: [UInt8]) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return "\(bytes.count):\(String(h, radix: 16))"
}
