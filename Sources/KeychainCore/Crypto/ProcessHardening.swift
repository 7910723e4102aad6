internal import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// Keeps keys out of core dumps and away from same-uid debuggers' casual reach: a process
/// that may hold keys calls `disableCoreDumps()` first (`docs/security.md`, "Memory").
public enum ProcessHardening {
    /// `setrlimit(RLIMIT_CORE, 0)` and `prctl(PR_SET_DUMPABLE, 0)`: no core file is written
    /// on a crash, and /proc/PID/mem, environ and ptrace are closed to other processes of
    /// the same user (root excepted).
    /// - Returns: whether both calls succeeded.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        let core = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
        let dumpable = kc_set_dumpable(0) == 0
        return core && dumpable
    }

    /// Whether a tracer is attached to this process now (`TracerPid` of /proc/self/status
    /// is not 0), or the status cannot be read. A tracer attached before
    /// `disableCoreDumps()` stays attached: a program that is about to receive a secret
    /// checks this after it (kc-tpm).
    public static var isTraced: Bool {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let got = read(fd, &buffer, buffer.count)
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            bytes += buffer[0..<got]
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("TracerPid:") {
            return String(line.dropFirst("TracerPid:".count).filter { $0 != " " && $0 != "\t" }) != "0"
        }
        return true
    }

    /// Whether this process is currently dumpable (for tests).
    public static var isDumpable: Bool {
        kc_get_dumpable() == 1
    }
}
