import Foundation
import Testing
@testable import KeychainCore

/// A keychain on a full disk (a 1 MiB tmpfs; mounting needs root, so the suite runs only
/// as root, as in CI here). Found by `make stress`: a commit that failed for lack of space
/// had already moved the generation this process remembers, so the next read reported
/// the file as a restored older copy (errSecDecode) and the agent refused the keychain.
@Suite(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
struct DiskFullTests {
    @Test func aFullDiskFailsTheWriteAndNothingElse() throws {
        let folder = try TempKeychain.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard system("mount -t tmpfs -o size=1m,mode=0700 tmpfs '\(folder)' 2>/dev/null") == 0 else {
            Issue.record("could not mount a tmpfs as root")
            return
        }
        defer { _ = system("umount '\(folder)'") }
        let keychain = try Keychain.create(
            at: folder + "/full.keychain-db", password: try secure(TempKeychain.password),
            profile: .interactive)
        var added = 0
        var failure: KeychainError?
        for i in 0..<200 {
            do {
                try keychain.add([
                    kSecClass: kSecClassGenericPassword, kSecAttrService: "full-\(i)",
                    kSecValueData: Data(repeating: UInt8(i & 0xFF), count: 24 * 1024)
                ])
                added += 1
            } catch let error as KeychainError {
                failure = error
                break
            }
        }
        #expect(failure?.status == errSecDiskFull, "\(String(describing: failure))")
        #expect(failure?.message.contains("disk is full") == true)
        #expect(added > 0)
        // The same Keychain object goes on working: no false rollback alarm.
        #expect(try keychain.itemCount() == added)
        let last =
            try keychain.copyMatching([
                kSecClass: kSecClassGenericPassword, kSecAttrService: "full-\(added - 1)",
                kSecReturnData: true
            ]) as? Data
        #expect(last == Data(repeating: UInt8((added - 1) & 0xFF), count: 24 * 1024))
        try keychain.verify()
        // A second failing write changes nothing either.
        #expect(throws: KeychainError.self) {
            try keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "more", kSecValueData: Data(count: 64 * 1024)])
        }
        #expect(try keychain.itemCount() == added)
        try keychain.verify()
    }
}
