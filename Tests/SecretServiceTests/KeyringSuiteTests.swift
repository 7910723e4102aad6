import Foundation
import Testing
import KCTestSupport

/// keyring's own backend test suite (its tests/backends/test_SecretService.py, which runs
/// `keyring.testing.backend.BackendBasicTests` against the SecretService backend) with
/// Debian's python3-keyring against kc's provider on a private bus. The tests come from the
/// sdist of the installed keyring's version, downloaded from PyPI at test time (Debian ships
/// none, and the project keeps no copy of keyring's code).
@Suite struct KeyringSuiteTests {
    /// The tests of BackendBasicTests in keyring 23.9.3 (Debian 12); later versions have more.
    static let basicTestCount = 12

    /// keyring's tests store in `/org/freedesktop/secrets/collection/session` (gnome-keyring's
    /// in-memory collection): in kc that is the keychain named `session`. It is the only
    /// keychain in this home (there is no default `login`), so every item the suite stores,
    /// reads and deletes goes through it.
    @Test func keyringsOwnBackendSuitePasses() throws {
        let home = try KCHome()
        #expect(try home.kc(["create", "session", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try home.kc(["unlock", "-k", "session"], password: KCHome.password).status == 0)
        let bus = try PrivateBus(home)

        let version = try bus.python("import importlib.metadata as m; print(m.version('keyring'))")
        let keyringVersion = version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(version.status == 0 && !keyringVersion.isEmpty, "Debian's python3-keyring is missing: \(version.stderr)")

        let sdist = try Self.downloadSdist(keyringVersion, into: home.directory + "/pypi")
        let testFile = sdist + "/tests/backends/test_SecretService.py"
        try #require(FileManager.default.fileExists(atPath: testFile), "keyring \(keyringVersion)'s sdist has no \(testFile)")

        // Debian's keyring, not the sdist's copy: the test file's folder goes on sys.path,
        // never the sdist's root (--noconftest skips its conftest.py, which would put it there).
        let out = try bus.run(
            [
                "/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "--noconftest",
                "-rA", "--rootdir", sdist, testFile
            ], timeout: 180)
        let lines = out.stdout.split(separator: "\n").map(String.init)
        let passed = lines.filter { $0.hasPrefix("PASSED ") }
        let backendPassed = passed.filter { $0.contains("::TestSecretServiceKeyring::") }
        let notPassed = lines.filter { $0.hasPrefix("FAILED ") || $0.hasPrefix("ERROR ") || $0.hasPrefix("SKIPPED ") || $0.hasPrefix("XFAIL ") }
        #expect(out.status == 0, "pytest exit \(out.status): \(out.stdout.suffix(6000))\(out.stderr.suffix(2000))")
        #expect(notPassed.isEmpty, "\(notPassed.joined(separator: "\n"))")
        #expect(backendPassed.count >= Self.basicTestCount, "\(backendPassed.count) of BackendBasicTests passed: \(out.stdout.suffix(6000))")
        if keyringVersion == "23.9.3" {
            // Debian 12's keyring: 12 backend tests and TestUnits' one.
            #expect(passed.count == 13, "\(passed.joined(separator: "\n"))")
        }
        #expect(lines.last?.contains("\(passed.count) passed") == true, "\(lines.last ?? "")")

        // The suite cleans up after itself: nothing is left in the keychain.
        #expect(try home.kc(["find", "-k", "session"]).status == 44)
    }

    /// Downloads and unpacks keyring's sdist of `version` (`PyPISdist`).
    /// - Returns: the unpacked sdist's folder.
    static func downloadSdist(_ version: String, into folder: String) throws -> String {
        try PyPISdist.download("keyring", version, into: folder)
    }
}
