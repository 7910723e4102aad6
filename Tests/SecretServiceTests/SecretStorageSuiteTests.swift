import Foundation
import Testing
import KCTestSupport

/// Python SecretStorage's own test suite (the tests/ folder of its sdist, run by its
/// tests/run_tests.py with the sdist's own secretstorage module) against kc's provider on a
/// private bus, unchanged and as its authors run it against gnome-keyring: no mock service,
/// so the bus name is org.freedesktop.secrets and the tests written for the mock skip
/// themselves. The sdist is downloaded from PyPI at test time, pinned by version and hash.
@Suite struct SecretStorageSuiteTests {
    /// The version pinned: Debian 12's python3-secretstorage, whose jeepney and
    /// cryptography the suite runs with.
    static let version = "3.3.3"
    /// The sha256 of `SecretStorage-3.3.3.tar.gz` on PyPI.
    static let sha256 = "2403533ef369eca6d2ba81718576c5e0f564d5cca1b58f73a8b23e7d4eeebd77"
    /// The tests that run against a real provider in 3.3.3: CollectionTest (4),
    /// ContextManagerTest (1), ExceptionsTest (3), ItemTest (11) and the
    /// Diffie-Hellman test (1).
    static let realTestCount = 20
    /// The tests that skip themselves unless a mock service runs (MockCollectionTest's 5,
    /// LockingUnlockingTest's 1).
    static let mockOnlyCount = 6

    /// The suite uses the default collection (`get_any_collection`): kc's default keychain,
    /// `login`, unlocked. It stores, reads, changes and deletes items there, among them two
    /// with the same attributes (one an empty `data/null` secret), and renames the
    /// collection and back.
    @Test func secretStoragesOwnSuitePasses() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        // An item of kc's own beside the suite's: it must come through untouched.
        #expect(try home.kc(["add", "-s", "example.org", "-a", "alice", "-w", "kept"]).status == 0)

        let sdist = try PyPISdist.download(
            "secretstorage", Self.version, sha256: Self.sha256, archiveName: "SecretStorage", into: home.directory + "/pypi")
        let runner = sdist + "/tests/run_tests.py"
        try #require(FileManager.default.fileExists(atPath: runner), "SecretStorage \(Self.version)'s sdist has no \(runner)")

        let out = try bus.run(["/usr/bin/python3", runner], timeout: 180)
        // unittest's TextTestRunner reports on stderr: one line per test, then a summary.
        let report = out.stdout + out.stderr
        let lines = report.split(separator: "\n").map(String.init)
        let results = lines.filter { $0.contains(") ... ") }
        let passed = results.filter { $0.hasSuffix(" ... ok") }
        let skipped = results.filter { $0.contains(" ... skipped ") }
        let notPassed = results.filter { !$0.hasSuffix(" ... ok") && !$0.contains(" ... skipped ") }
        #expect(out.status == 0, "run_tests.py exit \(out.status): \(report.suffix(8000))")
        #expect(notPassed.isEmpty, "\(notPassed.joined(separator: "\n"))\n\(report.suffix(8000))")
        #expect(passed.count == Self.realTestCount, "\(passed.count) passed: \(report.suffix(8000))")
        // Only the mock service's tests skip; every one that can run against a provider ran.
        #expect(skipped.count == Self.mockOnlyCount, "\(skipped.joined(separator: "\n"))")
        #expect(skipped.allSatisfy { $0.contains("mocked server") }, "\(skipped.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("Ran \(Self.realTestCount + Self.mockOnlyCount) tests") }, "\(report.suffix(2000))")

        // The suite cleans up after itself: only kc's own item is left, as kc stored it,
        // and the collection's label is its name again.
        let find = try home.kc(["find", "-s", "example.org", "-a", "alice", "-w"])
        #expect(find.status == 0 && find.stdout == "kept", "\(find.stdout)\(find.stderr)")
        let left = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            print(col.get_label(), len(list(col.get_all_items())))
            """)
        #expect(left.status == 0 && left.stdout == "login 1\n", "\(left.stdout)\(left.stderr)")
    }
}
