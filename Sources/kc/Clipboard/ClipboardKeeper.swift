import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The small process that clears a copied secret: kc starts itself again as
/// `kc __clipboard-keeper BACKEND SECONDS TARGET [EXTRA]`, hands it the secret on a pipe
/// (never argv or the environment), and returns at once.
///
/// The keeper holds the secret in locked memory (libsodium's guarded heap), is not
/// dumpable (`Startup.prepare`), leaves kc's caller behind (a new session, its standard
/// streams on /dev/null, no other descriptor), sleeps on CLOCK_BOOTTIME (a suspended
/// laptop counts the time it slept), then clears the clipboard only if it still holds the
/// secret (compared in constant time), and exits.
enum ClipboardKeeper {
    /// The hidden subcommand.
    static let subcommand = "__clipboard-keeper"
    /// The largest secret a keeper takes (kc's limit on a secret).
    static let maxSecret = 16 << 20

    /// Starts the keeper for a copy made with `backend` to `target`.
    /// - Throws: errSecIO when it cannot be started; the copy then stays on the clipboard.
    static func start(
        secret: UnsafeRawBufferPointer, backend: ClipboardBackend, seconds: Int,
        target: String, extra: [String]
    ) throws {
        guard let pipe = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe for the clipboard keeper") }
        let argv = ["kc", subcommand, backend.rawValue, String(seconds), target] + extra
        let environment = ChildEnvironment.inherited().map { "\($0.0)=\($0.1)" }
        // This very program, as the agent is started (AgentClient.launch).
        let started = DetachedChild.spawn("/proc/self/exe", arguments: argv, environment: environment, stdin: pipe[0])
        close(pipe[0])
        if case .failure(let failure) = started {
            close(pipe[1])
            throw KeychainError(
                errSecIO, "cannot start the process that clears the clipboard: \(failure.description)",
                cause: .errno(failure.code))
        }
        // The length, then the bytes; a keeper that died early must not kill kc with SIGPIPE.
        let previous = signal(SIGPIPE, SIG_IGN)
        var length = UInt64(secret.count).littleEndian
        let sent = withUnsafeBytes(of: &length) { Report.writeAll(pipe[1], $0) } && Report.writeAll(pipe[1], secret)
        close(pipe[1])
        signal(SIGPIPE, previous)
        guard sent else { throw KeychainError(errSecIO, "cannot hand the secret to the process that clears the clipboard") }
    }

    /// The keeper itself: `arguments` are those after the subcommand. Returns its exit status.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        let words = Array(arguments)
        guard words.count >= 3, let backend = ClipboardBackend(rawValue: words[0]),
            let seconds = Int(words[1]), seconds >= 0
        else { return 2 }
        let target = words[2]
        let extra = Array(words.dropFirst(3))
        guard let secret = try? readSecret() else { return 1 }
        Detach.fromCaller()
        sleep(until: Deadline.after(seconds: Double(seconds)))
        // One byte more than the secret: a longer clipboard is not the secret.
        if backend == .osc52 {
            try? backend.clear(target: target, extra: extra)
        } else if let held = try? backend.read(target: target, extra: extra, limit: secret.count + 1),
            held.constantTimeEquals(secret)
        {
            try? backend.clear(target: target, extra: extra)
        }
        return 0
    }

    /// Sleeps until `deadline` on CLOCK_BOOTTIME (time spent suspended counts).
    private static func sleep(until deadline: Deadline) {
        var ts = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Reads the length and then the secret from stdin into locked memory.
    private static func readSecret() throws -> SecureBytes {
        var length: UInt64 = 0
        guard withUnsafeMutableBytes(of: &length, { readExactly(0, $0) }) else { throw KeychainError(errSecIO) }
        let count = Int(UInt64(littleEndian: length))
        guard count <= maxSecret else { throw KeychainError(errSecDataTooLarge) }
        let secret = try SecureBytes(count: count, guarded: true)
        guard secret.withUnsafeMutableBytes({ readExactly(0, $0) }) else { throw KeychainError(errSecIO) }
        return secret
    }

    /// Fills `buffer` from `fd`; false at an early end or an error.
    private static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var got = 0
        while got < buffer.count {
            guard let base = buffer.baseAddress else { return false }
            let n = read(fd, base + got, buffer.count - got)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            got += n
        }
        return true
    }
}
