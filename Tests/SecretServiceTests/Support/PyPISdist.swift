import Foundation
import Testing
import KCTestSupport

/// A Python package's source distribution, downloaded from PyPI with pip at test time and
/// unpacked: where a client's own test suite comes from (Debian ships none of them, and the
/// project keeps no copy of their code). The suites run unchanged from the unpacked folder.
enum PyPISdist {
    /// Downloads and unpacks `package`'s sdist of `version` with pip (`--no-binary`: the
    /// sdist, while its build requirements may come as wheels). With `sha256`, pip refuses
    /// any other archive (`--require-hashes`), so a pinned suite is exactly the one named.
    /// Fails the test, naming the cause, when PyPI cannot be reached: the suite cannot run
    /// without it.
    /// - Parameters:
    ///   - archiveName: the archive's name on PyPI without its version (SecretStorage
    ///     3.3.3's is `SecretStorage-3.3.3.tar.gz`); `package` by default.
    /// - Returns: the unpacked sdist's folder.
    static func download(_ package: String, _ version: String, sha256: String? = nil, archiveName: String? = nil, into folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var env = ["PATH": "/usr/bin:/bin", "HOME": folder, "PIP_DISABLE_PIP_VERSION_CHECK": "1"]
        // The network settings of the machine that runs the tests (a proxy, a CA bundle).
        for (key, value) in ProcessInfo.processInfo.environment
        where key.hasPrefix("PIP_") || key.lowercased().hasSuffix("_proxy") || ["SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"].contains(key) {
            env[key] = value
        }
        var argv = [
            "/usr/bin/python3", "-m", "pip", "download", "--no-cache-dir", "--no-deps", "--no-binary", package, "-d", folder
        ]
        if let sha256 {
            let requirements = folder + "/requirements.txt"
            try "\(package)==\(version) --hash=sha256:\(sha256)\n".write(toFile: requirements, atomically: true, encoding: .utf8)
            argv += ["--require-hashes", "-r", requirements]
        } else {
            argv.append("\(package)==\(version)")
        }
        let download = try Spawn.run(argv, environment: env, timeout: 240)
        let base = (archiveName ?? package) + "-" + version
        let archive = folder + "/" + base + ".tar.gz"
        try #require(
            download.status == 0 && FileManager.default.fileExists(atPath: archive),
            "could not download \(package) \(version)'s sdist from PyPI (the suite needs it; is PyPI reachable?): \(download.stderr.suffix(3000))")
        let unpack = try Spawn.run(["/bin/tar", "-xzf", archive, "-C", folder], environment: env, timeout: 60)
        try #require(unpack.status == 0, "could not unpack \(archive): \(unpack.stderr)")
        return folder + "/" + base
    }
}
