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
    /// run in one: prompts must fail at once, never wait.
    public static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws -> Output {
        try Spawn.run([path] + arguments, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }, stdin: stdin)
    }
}

/// Starts processes with posix_spawn: a new session, default signal dispositions and an
/// empty signal mask (Foundation's Process passes on the blocked mask of its thread, and
/// a shell then waits forever for SIGCHLD), stdout through a pipe, stderr to a file.
public enum Spawn {
    public static func run(_ argv: [String], environment: [String: String], stdin: Data? = nil) throws -> KCBinary.Output {
        signal(SIGPIPE, SIG_IGN)
        var outPipe: [Int32] = [0, 0], inPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&inPipe) == 0 else { throw KeychainError(errSecIO, "pipe failed") }
        let errFile = StderrFile()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errFile.path, O_WRONLY | O_APPEND, 0)
        for fd in inPipe + outPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID
        posix_spawnattr_setflags(&attributes, Int16(0x08 | 0x04 | 0x80))
        let env = environment.map { "\($0.key)=\($0.value)" }
        var cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in cArgv + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cArgv, &cEnv)
        close(inPipe[0])
        close(outPipe[1])
        guard rc == 0 else {
            close(inPipe[1]); close(outPipe[0])
            throw KeychainError(errSecIO, "cannot start \(argv[0]): \(String(cString: strerror(rc)))")
        }
        let writer = inPipe[1]
        let input = stdin ?? Data()
        let feeding = Thread {
            input.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = write(writer, raw.baseAddress! + done, raw.count - done)
                    if n <= 0 { break }
                    done += n
                }
            }
            close(writer)
        }
        feeding.start()
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(outPipe[0], &buffer, buffer.count)
            if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(outPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return KCBinary.Output(status: exit, stdout: String(decoding: output, as: UTF8.self),
                               stderr: errFile.contents(), stdoutBytes: output)
    }
}

/// A private home for one test: HOME and XDG_DATA_HOME point into a fresh 0700 folder, and
/// a keychain (INTERACTIVE KDF, for speed) can be created in it.
public final class KCHome {
    public static let password = "test password"
    public let directory: String
    public var environment: [String: String]

    public init() throws {
        var template = Array((NSTemporaryDirectory() + "/kc-cli-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        // The real path: the agent knows keychains by it.
        let made = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        directory = (try? FileManager.default.destinationOfSymbolicLink(atPath: made)) ?? URL(fileURLWithPath: made).standardizedFileURL.path
        environment = ["HOME": directory, "XDG_DATA_HOME": directory + "/data",
                       "KC_AGENT_DIR": directory + "/agent", "KC_AGENT_GRACE": "10"]
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

/// A temporary file that collects a child's stderr.
final class StderrFile {
    let path = NSTemporaryDirectory() + "/kc-stderr-\(UUID().uuidString)"
    let handle: FileHandle

    init() {
        FileManager.default.createFile(atPath: path, contents: nil)
        handle = FileHandle(forWritingAtPath: path) ?? FileHandle.nullDevice
    }

    deinit {
        try? handle.close()
        unlink(path)
    }

    func contents() -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}
