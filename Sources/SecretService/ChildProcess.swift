import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The one way the provider starts a program (dbus-daemon, itself detached, pinentry):
/// found on PATH, through `DetachedChild` (a new session, only descriptors 0-2; stderr
/// always /dev/null: the provider logs nothing), with the provider's errors.
enum ChildProcess {
    /// Starts `arguments`; does not wait. - Returns: the child's pid.
    static func spawn(_ arguments: [String], stdin: Int32? = nil, stdout: Int32? = nil) throws(BusError) -> pid_t {
        switch DetachedChild.spawn(arguments[0], arguments: arguments, searchPath: true, stdin: stdin, stdout: stdout) {
        case .success(let pid): return pid
        case .failure(let failure): throw .failed("cannot start \(arguments[0]): \(failure.description)")
        }
    }
}
