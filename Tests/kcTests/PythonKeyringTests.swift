import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The Python keyring backend (integrations/python): keyring's own BackendBasicTests and
/// pip's and uv's ways of asking, with keyring and pytest from PyPI in a venv, against a
/// real keychain unlocked through the agent (integrations/python/run-tests.sh).
@Suite struct PythonKeyringTests {
    @Test func keyringsOwnBackendTestsPass() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let out = try Spawn.run(
            ["/bin/bash", root + "/integrations/python/run-tests.sh", KCBinary.path, root + "/.build/python-keyring-venv"],
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory()],
            timeout: 900)   // a fresh clone creates the venv and installs keyring first
        #expect(out.status == 0, "\(out.stdout)\n\(out.stderr)")
        #expect(out.stdout.contains(" passed") && !out.stdout.contains("failed") && !out.stdout.contains("skipped"), "\(out.stdout)")
        // keyring's suite has 15 tests; the backend's own file adds 7.
        #expect(out.stdout.contains("22 passed"), "\(out.stdout)")
    }
}
