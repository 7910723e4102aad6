import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// The one way kc starts a detached child with posix_spawn (the agent; the tests'
/// children): a new session, an empty signal mask and default dispositions for every
/// signal, whatever the caller's thread had. Descriptors are the caller's business: pipes
/// come from `CloseOnExec.pipe()` and `CloseOnExec.closeAll(from: 3, in:)` closes the rest.
public enum SpawnAttributes {
    /// Sets a new session, an empty signal mask and default dispositions on `attributes`
    /// (initialised by the caller).
    public static func newSession(_ attributes: inout posix_spawnattr_t) {
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF: the child leads
        // its own session and process group, which can be killed as a whole.
        posix_spawnattr_setflags(&attributes, Int16(0x80 | 0x08 | 0x04))
    }
}
