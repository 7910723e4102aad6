#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose two ends close on exec, so a spawned child holds only the end it was
/// given with dup2 (Glibc's `pipe2` is not visible to Swift without _GNU_SOURCE).
enum CloseOnExecPipe {
    /// [read end, write end], or nil when the system has no descriptors left.
    static func make() -> [Int32]? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return fds
    }
}
