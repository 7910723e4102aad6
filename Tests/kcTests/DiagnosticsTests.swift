import Foundation
import Testing
import KCTestSupport

/// `KC_DEBUG=1` adds what lay underneath an error (the SQLite result code, the errno) on
/// one more line; without it the output is what users always saw.
@Suite struct DiagnosticsTests {
    @Test func kcDebugShowsTheSQLiteCodeUnderADamagedKeychain() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "me"], password: KCHome.password, stdin: Data("x".utf8)).status == 0)
        // Overwrite the second page of the (checkpointed) file with a pattern.
        let handle = try #require(FileHandle(forUpdatingAtPath: h.defaultKeychain))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 4096))
        try handle.close()
        let plain = try h.kc(["find", "-s", "svc", "-w"], password: KCHome.password)
        #expect(plain.status == 93, "\(plain.stderr)")
        #expect(plain.stderr.contains("the file is damaged") && !plain.stderr.contains("debug"), "\(plain.stderr)")
        let debug = try h.kc(["find", "-s", "svc", "-w"], password: KCHome.password, extra: ["KC_DEBUG": "1"])
        #expect(debug.status == 93)
        #expect(debug.stderr.hasPrefix(plain.stderr), "the same message first: \(debug.stderr)")
        #expect(debug.stderr.contains("kc: debug: SQLite result code 11: database disk image is malformed"), "\(debug.stderr)")
    }
}
