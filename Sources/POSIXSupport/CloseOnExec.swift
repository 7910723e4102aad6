import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

// Glibc declares pipe2 and accept4 only under _GNU_SOURCE, which Swift's Glibc module does
// not set; both have a plain C signature, so they are bound by name.
@_silgen_name("pipe2") private func c_pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func c_addclosefrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
@_silgen_name("accept4") private func c_accept4(
    _ fd: Int32, _ address: UnsafeMutableRawPointer?,
    _ length: UnsafeMutablePointer<socklen_t>?, _ flags: Int32
) -> Int32

/// Descriptors that are close-on-exec from the moment they exist.
///
/// Setting FD_CLOEXEC after `pipe()` or `accept()` leaves a window in which another
/// thread's `posix_spawn` hands the descriptor to its child: a test run hung when a
/// `git-credential-kc` child held the write end of another child's stdin. kc and its tests
/// make every pipe and accepted socket here.
///
///     guard let fds = CloseOnExec.pipe() else { throw ... }   // [read end, write end]
public enum CloseOnExec {
    /// `pipe2(O_CLOEXEC)`: [read end, write end], or nil when no descriptor is left.
    public static func pipe() -> [Int32]? {
        var fds: [Int32] = [-1, -1]
        guard c_pipe2(&fds, O_CLOEXEC) == 0 else { return nil }
        return fds
    }

    /// `socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC)`: two connected ends, or nil when no
    /// descriptor is left. Unlike a pipe, a socket cannot be opened again through
    /// `/proc/PID/fd/N` (ENXIO): a process of the same user that looks at a child's
    /// descriptors while the child is still dumpable gets no handle on it.
    public static func socketPair() -> [Int32]? {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return nil }
        return fds
    }

    /// Adds "close every descriptor from `lowest` up" to a spawn's file actions (glibc
    /// 2.34+), for descriptors this process did not make: a test runner's own pipes, say.
    /// - Returns: 0, or an errno value.
    @discardableResult
    public static func closeAll(from lowest: Int32, in actions: UnsafeMutablePointer<posix_spawn_file_actions_t>) -> Int32 {
        c_addclosefrom(actions, lowest)
    }

    /// `accept4(SOCK_CLOEXEC)`: the accepted connection, or -1 (errno set).
    public static func accept(_ listener: Int32) -> Int32 {
        c_accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
    }
}
