import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The child of `kc run`: its pid for the signal handler.
nonisolated(unsafe) private var runChild: pid_t = 0
/// A signal that arrived before the child existed, forwarded once it does.
nonisolated(unsafe) private var runPendingSignal: Int32 = 0

/// Forwards a signal sent to kc (by kill, not by the terminal: the terminal already sent
/// it to the child, which shares kc's process group) to the child.
private func forwardSignal(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    let fromTerminal = info.map { $0.pointee.si_code == 0x80 } ?? false   // SI_KERNEL
    if fromTerminal { return }
    if runChild > 0 { kill(runChild, signal) } else { runPendingSignal = signal }
}

/// Starts a command with an environment, forwards signals, optionally masks its output,
/// and returns the exit status kc should give (128+N for death by signal N; 127 when the
/// command is not found, 126 when it cannot be started, as a shell says).
enum ChildProcess {
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2]

    /// - Parameter environment: `NAME=VALUE` entries; wiped and emptied once the child has them.
    static func run(
        _ command: [String], environment: inout [[UInt8]],
        mask: (out: Bool, err: Bool), maskable: [[UInt8]]
    ) throws -> Int32 {
        // Signals ignored when kc started (nohup, a shell's background job) stay ignored, in
        // kc and in the child; every other signal is reset to its default in the child.
        var ignored = sigset_t()
        sigemptyset(&ignored)
        for s in 1..<Int32(32) {
            var current = sigaction()
            // SIG_IGN is 1
            if sigaction(s, nil, &current) == 0 && unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1 { sigaddset(&ignored, s) }
        }
        for s in forwarded where sigismember(&ignored, s) == 0 {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = forwardSignal
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(s, &action, nil)
        }
        signal(SIGPIPE, SIG_IGN)

        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        if mask.out { guard let p = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe") }; outPipe = p }
        if mask.err { guard let p = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe") }; errPipe = p }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (p, fd) in [(outPipe, Int32(1)), (errPipe, Int32(2))] where p[1] >= 0 {
            posix_spawn_file_actions_adddup2(&actions, p[1], fd)
            posix_spawn_file_actions_addclose(&actions, p[0])
            posix_spawn_file_actions_addclose(&actions, p[1])
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), none = sigset_t()
        sigfillset(&defaults)
        for s in 1..<Int32(32) where sigismember(&ignored, s) == 1 { sigdelset(&defaults, s) }
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] =
            environment.map { entry in
                let p = calloc(entry.count + 1, 1)!.assumingMemoryBound(to: CChar.self)
                entry.withUnsafeBytes { if let base = $0.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: entry.count) } }
                return p
            } + [nil]
        for i in environment.indices { environment[i].withUnsafeMutableBytes { if let b = $0.baseAddress { memset(b, 0, $0.count) } } }
        environment.removeAll()
        defer {
            for p in argv { free(p) }
            // The secrets leave kc's memory as soon as the child has its copy.
            for p in envp { if let p { memset(p, 0, strlen(p)); free(p) } }
        }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, command[0], &actions, &attributes, &argv, &envp)
        for fd in [outPipe[1], errPipe[1]] where fd >= 0 { close(fd) }
        guard rc == 0 else {
            for fd in [outPipe[0], errPipe[0]] where fd >= 0 { close(fd) }
            // The shell's meanings: 127 not found, 126 found but not executable.
            let error = KeychainError(
                rc == ENOENT ? errSecParam : errSecIO, "cannot run \(command[0]): \(String(cString: strerror(rc)))",
                hint: rc == ENOENT ? "check the command's name and PATH" : nil, cause: .errno(rc))
            Report.err(Report.lines(error))
            return rc == ENOENT ? 127 : 126
        }
        runChild = pid
        if runPendingSignal != 0 { kill(pid, runPendingSignal) }
        for p in envp { if let p { memset(p, 0, strlen(p)) } }

        var status: Int32 = 0
        if mask.out || mask.err {
            status = relay(pid: pid, streams: [(outPipe[0], 1), (errPipe[0], 2)].filter { $0.0 >= 0 }, maskable: maskable)
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }

    /// Copies the child's masked streams to kc's until they close, or the child has exited
    /// and they have been quiet for 50 ms or drained for a second (a background grandchild
    /// may keep a pipe open for ever). What a masker holds back (a possible start of a
    /// secret) is written only when later bytes decide it or the relay ends, never because
    /// the stream went quiet (OutputMasker).
    private static func relay(pid: pid_t, streams: [(Int32, Int32)], maskable: [[UInt8]]) -> Int32 {
        var maskers = streams.map { _ in OutputMasker(secrets: maskable) }
        var open = streams.map { _ in true }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var status: Int32 = 0
        var exitedAt: Double?
        func now() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        while open.contains(true) {
            if exitedAt == nil, waitpid(pid, &status, WNOHANG) == pid { exitedAt = now() }
            if let t = exitedAt, now() - t > 1.0 { break }
            var fds = streams.enumerated().map { i, s in pollfd(fd: open[i] ? s.0 : -1, events: Int16(POLLIN), revents: 0) }
            let n = poll(&fds, nfds_t(fds.count), 50)
            if n < 0 && errno == EINTR { continue }
            if n == 0 {
                // Quiet: nothing is let go (a pause must not split a secret into two
                // unmasked halves); once the child has exited, quiet ends the relay.
                if exitedAt != nil { break }
                continue
            }
            for i in streams.indices where open[i] && fds[i].revents != 0 {
                let got = read(streams[i].0, &buffer, buffer.count)
                if got > 0 {
                    Report.writeAll(streams[i].1, maskers[i].feed(buffer[0..<got]))
                } else if got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN) {
                    open[i] = false
                    Report.writeAll(streams[i].1, maskers[i].flush())
                    close(streams[i].0)
                }
            }
        }
        for i in streams.indices { Report.writeAll(streams[i].1, maskers[i].flush()) }
        for i in buffer.indices { buffer[i] = 0 }
        if exitedAt == nil { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
        return status
    }
}
