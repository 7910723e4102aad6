import Foundation
import Testing
import KeychainCore

/// Runs the built `kc` binary, as a user would, and captures what it prints.
struct KCBinary {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutBytes: [UInt8] = []
    }

    /// The `kc` built beside this test bundle.
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kc").path
    }

    /// Runs kc in a new session (setsid), so it has no controlling terminal even when the
    /// tests run in one: prompts must fail at once, never wait.
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["-w", path] + arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        // kc may exit before reading all of stdin (a refused 17 MiB secret): a write to
        // the closed pipe must fail, not kill the test runner with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
        try? input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self), stdoutBytes: Array(o))
    }
}

/// A private home for one test: HOME and XDG_DATA_HOME point into a fresh 0700 folder, and
/// a keychain (INTERACTIVE KDF, for speed) can be created in it.
final class KCHome {
    static let password = "test password"
    let directory: String
    var environment: [String: String]

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/kc-cli-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        directory = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        environment = ["HOME": directory, "XDG_DATA_HOME": directory + "/data"]
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The default keychain's path.
    var defaultKeychain: String { directory + "/data/kc/login.keychain-db" }

    /// Creates the default keychain with `password`.
    func createKeychain() throws {
        let out = try kc(["create", "--kdf", "interactive"], password: Self.password)
        #expect(out.status == 0, "\(out.stderr)")
    }

    /// Runs kc with this home's environment, optionally KC_PASSWORD and stdin bytes.
    func kc(_ arguments: [String], password: String? = nil, stdin: Data? = nil, extra: [String: String] = [:]) throws -> KCBinary.Output {
        var env = environment.merging(extra) { _, b in b }
        if let password { env["KC_PASSWORD"] = password }
        return try KCBinary.run(arguments, environment: env, stdin: stdin)
    }

    /// Runs a shell script with kc on the PATH and this home's environment.
    func sh(_ script: String, password: String? = KCHome.password) throws -> KCBinary.Output {
        var env = environment
        if let password { env["KC_PASSWORD"] = password }
        env["PATH"] = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["-w", "/bin/sh", "-c", script]
        process.environment = env
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return KCBinary.Output(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                               stderr: String(decoding: e, as: UTF8.self), stdoutBytes: Array(o))
    }
}

@Suite struct VersionTests {
    @Test func versionNamesKcLibsodiumAndSQLite() throws {
        let out = try KCBinary.run(["--version"])
        #expect(out.status == 0)
        #expect(out.stdout == "kc 0.1.0 (libsodium \(LibraryVersions.sodium), SQLite \(LibraryVersions.sqlite))\n")
        #expect(out.stderr == "")
        #expect(LibraryVersions.sodium.hasPrefix("1."))
        #expect(LibraryVersions.sqlite.hasPrefix("3."))
    }
}
