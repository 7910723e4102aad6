import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// One run of a clipboard program (`xclip`, `xsel`, `wl-copy`, `wl-paste`, `tmux`): found on
/// PATH by kc itself, started with posix_spawn, given bytes on stdin, its stdout read back
/// into locked memory, all under a deadline.
///
/// The child gets descriptors 0-2 and nothing else (stderr on /dev/null, stdout on
/// /dev/null unless it is read): `xclip -i`, `xsel -i` and `wl-copy` leave a process behind
/// that serves the selection, and it must not hold a pipe of kc's caller.
///
///     let out = try ClipboardTool.run(xclip, ["-selection", "clipboard", "-o"], read: limit)
struct ClipboardTool {
    /// The program's absolute path.
    let path: String

    /// The first executable `name` in the directories of `$PATH`, or nil.
    static func find(_ name: String) -> ClipboardTool? {
        let path = Environment.get("PATH") ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: true) where folder.hasPrefix("/") {
            let candidate = folder + "/" + name
            var st = stat()
            if stat(candidate, &st) == 0, st.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return ClipboardTool(path: candidate)
            }
        }
        return nil
    }

    /// The program's last path component, for messages.
    var name: String { path.split(separator: "/").last.map(String.init) ?? path }

    /// What a run gave: its exit status (nil when it was killed at the deadline or died of a
    /// signal) and, when asked for, its stdout (at most `read` bytes; `overflowed` past that).
    struct Result: ~Copyable {
        /// The exit status; nil when the program was killed at the deadline or by a signal.
        var status: Int32?
        /// Its stdout, when it was asked for, in locked memory.
        var output: SecureBytes?
        /// Whether it wrote more than was asked for (the rest was read and dropped).
        var overflowed = false
        /// Whether the program exited with status 0.
        var succeeded: Bool { status == 0 }
        /// The output as text, empty when none was read: for lists and help, never a secret.
        var text: String {
            switch output {
            case .some(let bytes): return bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            case .none: return ""
            }
        }
    }

    /// Runs the program with `arguments`, `input` on its stdin (or an empty stdin), and
    /// `environment` extra variables over kc's own (without its password variables).
    /// - Parameter read: read at most this many bytes of stdout into locked memory; nil
    ///   sends stdout to /dev/null.
    /// - Throws: errSecIO when no pipe or process can be had.
    func run(
        _ arguments: [String], input: UnsafeRawBufferPointer? = nil, read limit: Int? = nil,
        environment extra: [(String, String)] = [], timeout: Double = 5
    ) throws -> Result {
        guard let stdinPipe = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe for \(name)") }
        var stdoutPipe: [Int32] = [-1, -1]
        if limit != nil {
            guard let p = CloseOnExec.pipe() else {
                stdinPipe.forEach { close($0) }
                throw KeychainError(errSecIO, "cannot make a pipe for \(name)")
            }
            stdoutPipe = p
        }
        var variables = ChildEnvironment.inherited().filter { name, _ in !extra.contains { $0.0 == name } } + extra
        if !variables.contains(where: { $0.0 == "PATH" }) { variables.append(("PATH", "/usr/bin:/bin")) }
        let started = DetachedChild.spawn(
            path, arguments: [path] + arguments, environment: variables.map { "\($0.0)=\($0.1)" },
            stdin: stdinPipe[0], stdout: stdoutPipe[1] >= 0 ? stdoutPipe[1] : nil)
        close(stdinPipe[0])
        if stdoutPipe[1] >= 0 { close(stdoutPipe[1]) }
        guard case .success(let pid) = started else {
            close(stdinPipe[1])
            if stdoutPipe[0] >= 0 { close(stdoutPipe[0]) }
            let code = if case .failure(let failure) = started { failure.code } else { EIO }
            throw KeychainError(errSecIO, "cannot run \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        // A program that exits before reading its input (xclip without a display) must not
        // kill kc with SIGPIPE: the write fails with EPIPE instead.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        return try exchange(pid: pid, stdin: stdinPipe[1], stdout: stdoutPipe[0], input: input, limit: limit, timeout: timeout)
    }

    /// Feeds `input` to the child and reads its stdout until both are done and it has
    /// exited, or the deadline passes (the child's process group is then killed).
    private func exchange(
        pid: pid_t, stdin: Int32, stdout: Int32, input: UnsafeRawBufferPointer?,
        limit: Int?, timeout: Double
    ) throws -> Result {
        let capacity = limit ?? 0
        let buffer = try SecureBytes(count: capacity, guarded: limit != nil)
        var overflowed = false
        var written = 0, got = 0
        var inFD = stdin, outFD = stdout
        let toWrite = input?.count ?? 0
        if toWrite == 0 { close(inFD); inFD = -1 }
        if inFD >= 0 { _ = fcntl(inFD, F_SETFL, fcntl(inFD, F_GETFL) | O_NONBLOCK) }
        let deadline = Self.now() + timeout
        var scratch = [UInt8](repeating: 0, count: 1)
        while inFD >= 0 || outFD >= 0 {
            let left = deadline - Self.now()
            if left <= 0 { break }
            var fds = [pollfd(fd: inFD, events: Int16(POLLOUT), revents: 0), pollfd(fd: outFD, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, Int32(min(left, 1) * 1000) + 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { continue }
            if inFD >= 0, fds[0].revents != 0, let input, let base = input.baseAddress {
                let w = write(inFD, base + written, toWrite - written)
                if w > 0 { written += w }
                if (w < 0 && errno != EAGAIN && errno != EINTR) || written == toWrite { close(inFD); inFD = -1 }
            }
            if outFD >= 0, fds[1].revents != 0 {
                let r: Int
                if got < capacity {
                    r = buffer.withUnsafeMutableBytes { room in
                        room.baseAddress.map { Glibc.read(outFD, $0 + got, capacity - got) } ?? 0
                    }
                    if r > 0 { got += r }
                } else {
                    r = Glibc.read(outFD, &scratch, 1)
                    if r > 0 { overflowed = true }
                }
                if r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN) { close(outFD); outFD = -1 }
            }
        }
        scratch[0] = 0
        for fd in [inFD, outFD] where fd >= 0 { close(fd) }
        let status = Self.reap(pid, until: deadline)
        guard limit != nil else { return Result(status: status, output: nil) }
        return Result(status: status, output: try buffer.copy(prefix: got), overflowed: overflowed)
    }

    /// Waits for the child until the deadline; past it, kills its process group.
    /// - Returns: its exit status, or nil when it did not exit by itself.
    private static func reap(_ pid: pid_t, until deadline: Double) -> Int32? {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }
            if r < 0 && errno != EINTR { return nil }
            if now() > deadline {
                kill(-pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return nil
            }
            usleep(5_000)
        }
    }

    /// Seconds on CLOCK_MONOTONIC.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
