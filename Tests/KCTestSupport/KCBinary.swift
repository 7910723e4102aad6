import Foundation
import KeychainCore

// Running the real `kc` binary from tests: shared by the kcTests and SecurityTests targets.

/// Runs the built `kc` binary, as a user would, and captures what it prints.
public struct KCBinary {
    public struct Output {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var stdoutBytes: [UInt8] = []
    }

    /// The `kc` built beside this test bundle, or the one named by `KC_TEST_BINARY` (`make
    /// test-release` runs these tests against the static release binary that gets installed).
    public static var path: String {
        if let chosen = ProcessInfo.processInfo.environment["KC_TEST_BINARY"], chosen.hasPrefix("/") { return chosen }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kc").path
    }

    /// Runs kc in a new session, so it has no controlling terminal even when the tests
    /// run in one: prompts must fail at once, never wait. Killed, and the test failed with
    /// what it printed, after `timeout` seconds (see `Spawn`).
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
        timeout: Double = Spawn.defaultTimeout
    ) throws -> Output {
        try Spawn.run(
            [path] + arguments, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
            stdin: stdin, timeout: timeout)
    }
}

/// A private home for one test: HOME and XDG_DATA_HOME point into a fresh 0700 folder, and
/// a keychain (INTERACTIVE KDF, for speed) can be created in it.
public final class KCHome {
    public static let password = "test password"
    public let directory: String
    public var environment: [String: String]

    /// - Parameter base: the folder to make it in (`OtherUser.base` for a home another
    ///   account uses: TMPDIR may be a private folder).
    public init(base: String = NSTemporaryDirectory()) throws {
        var template = Array((base + "/kc-cli-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        // The real path: the agent knows keychains by it.
        let made = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        directory = (try? FileManager.default.destinationOfSymbolicLink(atPath: made)) ?? URL(fileURLWithPath: made).standardizedFileURL.path
        environment = [
            "HOME": directory, "XDG_DATA_HOME": directory + "/data",
            "KC_AGENT_DIR": directory + "/agent", "KC_AGENT_GRACE": "10"
        ]
    }

    deinit {
        // Stop this test's agent, if it started one.
        _ = try? KCBinary.run(["agent", "--stop"], environment: environment)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The default keychain's path.
    public var defaultKeychain: String { directory + "/data/kc/login.keychain-db" }

    /// Creates the default keychain with `password`.
    public func createKeychain() throws {
        let out = try kc(["create", "--kdf", "interactive"], password: Self.password)
        guard out.status == 0 else { throw KeychainError(OSStatus(out.status), "kc create failed: \(out.stderr)") }
    }

    /// Runs kc with this home's environment, optionally KC_PASSWORD and stdin bytes.
    public func kc(_ arguments: [String], password: String? = nil, stdin: Data? = nil, extra: [String: String] = [:]) throws -> KCBinary.Output {
        var env = environment.merging(extra) { _, b in b }
        if let password { env["KC_PASSWORD"] = password }
        return try KCBinary.run(arguments, environment: env, stdin: stdin)
    }

    /// Runs a shell script with kc on the PATH and this home's environment.
    public func sh(_ script: String, password: String? = KCHome.password) throws -> KCBinary.Output {
        var env = environment
        if let password { env["KC_PASSWORD"] = password }
        env["PATH"] = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().path + ":/usr/bin:/bin"
        return try Spawn.run(["/bin/sh", "-c", "cd '\(directory)' || exit 99\n" + script], environment: env)
    }
}
