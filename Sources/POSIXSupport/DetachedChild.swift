#if canImport(Glibc)
import Glibc
#endif

/// The one way kc starts a child that outlives or stands apart from its caller (the
/// agent, the clipboard keeper and the tools it runs, the Secret Service provider's
/// dbus-daemon, pinentry and itself): a new session with a clean signal state
/// (`SpawnAttributes`), and only descriptors 0-2, each the one given or /dev/null; every
/// other descriptor is closed in the child (the caller's own pipes come from
/// `CloseOnExec.pipe()`, and `closeAll` catches those it did not make, a test runner's).
public enum DetachedChild {
    /// Starts `arguments` (`arguments[0]` is the child's argv[0]) from `program`: a path,
    /// or with `searchPath` a name looked up on PATH. `environment`: "NAME=value" entries,
    /// or nil for this process's own. `descriptor3`, when given, becomes the child's
    /// descriptor 3 (a secret's pipe: kc-tpm's `--pin-fd 3`). Does not wait.
    /// - Returns: the child's pid, or the errno value posix_spawn gave.
    public static func spawn(
        _ program: String, arguments: [String], searchPath: Bool = false,
        environment: [String]? = nil, stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil, descriptor3: Int32? = nil
    ) -> Result<pid_t, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, given) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            if let given {
                posix_spawn_file_actions_adddup2(&actions, given, fd)
            } else {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        // glibc's dup2 action onto the same number clears close-on-exec, as needed.
        if let descriptor3 { posix_spawn_file_actions_adddup2(&actions, descriptor3, 3) }
        CloseOnExec.closeAll(from: descriptor3 == nil ? 3 : 4, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        SpawnAttributes.newSession(&attributes)
        var cArgv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = (environment ?? []).map { strdup($0) } + [nil]
        defer {
            for p in cArgv { free(p) }
            for p in cEnv { free(p) }
        }
        var pid: pid_t = 0
        let rc: Int32 =
            environment == nil
            ? (searchPath
                ? posix_spawnp(&pid, program, &actions, &attributes, &cArgv, environ)
                : posix_spawn(&pid, program, &actions, &attributes, &cArgv, environ))
            : (searchPath
                ? posix_spawnp(&pid, program, &actions, &attributes, &cArgv, &cEnv)
                : posix_spawn(&pid, program, &actions, &attributes, &cArgv, &cEnv))
        return rc == 0 ? .success(pid) : .failure(SpawnFailure(code: rc))
    }

    /// Why a child could not be started: posix_spawn's errno value.
    public struct SpawnFailure: Error, Sendable {
        /// The errno value.
        public let code: Int32
        /// strerror's text for it.
        public var description: String { String(cString: strerror(code)) }
    }
}
