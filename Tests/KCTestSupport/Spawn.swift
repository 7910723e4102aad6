import Foundation
import KeychainCore
import POSIXSupport

/// Starts processes for the tests with posix_spawn, so that a test run cannot hang.
///
/// - Every pipe is close-on-exec from birth (`CloseOnExec.pipe()`): Swift Testing runs
///   tests on several threads, and a pipe made with plain `pipe()` leaked into another
///   test's child, which then held the write end of this child's stdin open for ever.
///   The child also closes every descriptor above 2 (the runner's own pipes are not
///   close-on-exec): it holds its three standard streams and nothing else.
/// - Every child gets a deadline. Past it, its whole process group is killed and `run`
///   throws `SpawnTimeout`, whose description carries what the child printed so far.
/// - A new session, default signal dispositions and an empty signal mask: no controlling
///   terminal (prompts fail at once), and no blocked SIGCHLD inherited from the test thread.
///
/// Foundation's `Process` and `Pipe` make descriptors that are not close-on-exec from
/// birth; the tests do not use them.
public enum Spawn {
    /// How long a child may run unless a test says otherwise.
    public static let defaultTimeout: Double = 60

    /// Runs `argv` to the end and returns its exit status and output.
    /// - Throws: `SpawnTimeout` when it outlives `timeout` seconds (it is killed first).
    public static func run(
        _ argv: [String], environment: [String: String], stdin: Data? = nil,
        timeout: Double = defaultTimeout
    ) throws -> KCBinary.Output {
        try start(argv, environment: environment, stdin: stdin, timeout: timeout).finish()
    }

    /// Starts `argv`; `finish()` feeds its stdin, collects its output and reaps it.
    public static func start(
        _ argv: [String], environment: [String: String], stdin: Data? = nil,
        timeout: Double = defaultTimeout
    ) throws -> SpawnedChild {
        signal(SIGPIPE, SIG_IGN)
        guard let inPipe = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "pipe2 failed") }
        guard let outPipe = CloseOnExec.pipe() else { closeAll(inPipe); throw KeychainError(errSecIO, "pipe2 failed") }
        guard let errPipe = CloseOnExec.pipe() else { closeAll(inPipe + outPipe); throw KeychainError(errSecIO, "pipe2 failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy only: the child holds fds 0-2 and nothing else.
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // And nothing the test runner itself left open without close-on-exec.
        CloseOnExec.closeAll(from: 3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child leads its own process group, which the deadline kills as a whole.
        SpawnAttributes.newSession(&attributes)
        let env = environment.map { "\($0.key)=\($0.value)" }
        var cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in cArgv + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cArgv, &cEnv)
        closeAll([inPipe[0], outPipe[1], errPipe[1]])
        guard rc == 0 else {
            closeAll([inPipe[1], outPipe[0], errPipe[0]])
            throw KeychainError(errSecIO, "cannot start \(argv[0]): \(String(cString: strerror(rc)))")
        }
        return SpawnedChild(
            pid: pid, argv: argv, stdin: Array(stdin ?? Data()), stdinFD: inPipe[1],
            stdoutFD: outPipe[0], stderrFD: errPipe[0], deadline: Deadline(seconds: timeout))
    }

    static func closeAll(_ fds: [Int32]) { for fd in fds where fd >= 0 { close(fd) } }
}

/// A child started by `Spawn.start`.
public final class SpawnedChild {
    public let pid: pid_t
    let argv: [String]
    private var input: [UInt8]
    private var stdinFD: Int32
    private var stdoutFD: Int32
    private var stderrFD: Int32
    private let deadline: Spawn.Deadline
    private var finished = false

    init(pid: pid_t, argv: [String], stdin: [UInt8], stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32, deadline: Spawn.Deadline) {
        self.pid = pid
        self.argv = argv
        input = stdin
        self.stdinFD = stdinFD
        self.stdoutFD = stdoutFD
        self.stderrFD = stderrFD
        self.deadline = deadline
        _ = fcntl(stdinFD, F_SETFL, fcntl(stdinFD, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        // A child never outlives the test that started it.
        if !finished {
            killpg(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        Spawn.closeAll([stdinFD, stdoutFD, stderrFD])
    }

    /// Feeds stdin, reads stdout and stderr until they close, and reaps the child.
    /// Once the child has exited, a grandchild that keeps a stream open (a server started
    /// in the background) is waited for at most 2 s more.
    /// - Throws: `SpawnTimeout` when the deadline passes first; the group is killed.
    public func finish() throws -> KCBinary.Output {
        var out: [UInt8] = [], err: [UInt8] = []
        var written = 0
        var status: Int32 = 0
        var exitedAt: Spawn.Deadline?
        var buffer = [UInt8](repeating: 0, count: 65536)
        if input.isEmpty { close(stdinFD); stdinFD = -1 }
        while stdoutFD >= 0 || stderrFD >= 0 || exitedAt == nil {
            if exitedAt == nil, waitpid(pid, &status, WNOHANG) == pid {
                exitedAt = Spawn.Deadline(seconds: 2)
                finished = true
            }
            if let drain = exitedAt, drain.remainingMilliseconds == 0 { break }
            if exitedAt == nil && deadline.remainingMilliseconds == 0 {
                killpg(pid, SIGKILL)
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                finished = true
                throw SpawnTimeout(
                    argv: argv, seconds: deadline.seconds,
                    stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
            }
            var fds = [
                pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)
            ]
            let n = poll(&fds, 3, 20)
            if n < 0 && errno != EINTR { break }
            if n <= 0 { continue }
            if stdinFD >= 0 && fds[2].revents != 0 {
                let wrote = input.withUnsafeBytes { write(stdinFD, $0.baseAddress! + written, $0.count - written) }
                if wrote > 0 { written += wrote }
                if written == input.count || (wrote < 0 && errno != EAGAIN && errno != EINTR) {
                    close(stdinFD)
                    stdinFD = -1
                }
            }
            for (i, fd) in [stdoutFD, stderrFD].enumerated() where fd >= 0 && fds[i].revents != 0 {
                let got = read(fd, &buffer, buffer.count)
                if got > 0 {
                    if i == 0 { out.append(contentsOf: buffer[0..<got]) } else { err.append(contentsOf: buffer[0..<got]) }
                } else if got == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fd)
                    if i == 0 { stdoutFD = -1 } else { stderrFD = -1 }
                }
            }
        }
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return KCBinary.Output(
            status: exit, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self), stdoutBytes: out)
    }
}

extension Spawn {
    /// A point on CLOCK_MONOTONIC.
    struct Deadline {
        let seconds: Double
        private let end: Double

        init(seconds: Double) {
            self.seconds = seconds
            end = Self.now() + seconds
        }

        static func now() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }

        var remainingMilliseconds: Int { max(0, Int(((end - Self.now()) * 1000).rounded(.up))) }
    }
}

/// A child that outlived its deadline: it was killed with its process group.
public struct SpawnTimeout: Error, CustomStringConvertible {
    public let argv: [String]
    public let seconds: Double
    public let stdout: String
    public let stderr: String

    public var description: String {
        "\(argv.joined(separator: " ")) was still running after \(seconds) s and was killed\n"
            + "--- stdout so far ---\n\(stdout)\n--- stderr so far ---\n\(stderr)"
    }
}
