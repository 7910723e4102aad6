import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The one way the provider starts a program (dbus-daemon, itself detached, pinentry):
/// found on PATH, in a new session with a clean signal state (`SpawnAttributes`), with only
/// descriptors 0-2, each one given or /dev/null (stderr always /dev/null: the provider logs
/// nothing). Every other descriptor is closed in the child, and the pipes handed in come
/// from `CloseOnExec.pipe()`, so nothing the provider holds leaks into a child.
enum ChildProcess {
    /// Starts `arguments`; does not wait. - Returns: the child's pid.
    static func spawn(_ arguments: [String], stdin: Int32? = nil, stdout: Int32? = nil) throws(BusError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        CloseOnExec.closeAll(from: 3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        SpawnAttributes.newSession(&attributes)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, environ)
        guard rc == 0 else { throw .failed("cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        return pid
    }
}
