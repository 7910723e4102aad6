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
        ProcessStatus.read()?.tracer != 0
    }

    /// Whether this process is currently dumpable (for tests).
    public static var isDumpable: Bool {
        kc_get_dumpable() == 1
    }
}
