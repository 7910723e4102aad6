import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Establishes that the process at the other end of the agent socket is the real kc
/// agent, before a client sends it a password (`docs/security.md`, "Other processes of
/// your user"). Any process of the user can bind the socket while no agent runs; only the
/// real agent may receive a password.
///
/// The peer (its pid from SO_PEERCRED) must
/// - run as this user: real, effective, saved and filesystem uid (`/proc/PID/status`);
/// - not be traced (`TracerPid: 0`); the agent is non-dumpable, so no one of this user can
///   attach to it later;
/// - run this very executable: the device and inode of `/proc/PID/exe` equal those of
///   `/proc/self/exe` (inodes, not paths: kc also runs as `git-credential-kc`, a link).
///
/// The kernel hides `/proc/PID/exe` of a non-dumpable process (as the agent is) from other
/// processes without CAP_SYS_PTRACE. The executable is then established only for an agent
/// this process started itself (from `/proc/self/exe`, its pid not yet reaped, so not
/// reused); any other is `unverifiable`.
package enum AgentPeer {
    /// Why a peer was not accepted.
    package enum Verdict: Error {
        /// It is not the kc agent, or not one that may be trusted (message says why).
        case refused(String)
        /// It may be the agent, but the kernel does not let this process see its executable.
        case unverifiable(pid: Int32)
    }

    /// Checks the peer of `socket`; `launched` is the pid of an agent this process spawned.
    /// Without `sameProgram` (a client that is not kc itself, such as a program linking the
    /// Security module), only the uids and TracerPid are checked. `program` is the kc
    /// executable the agent must be: this process's own (kc), or the `kc` installed beside
    /// another front end that unlocks keychains (the Secret Service provider).
    /// - Throws: `Verdict`; errSecIO when the peer has exited meanwhile (an agent killed
    ///   mid-request): nothing is sent to it, and no one is called an impostor for dying.
    package static func verify(
        _ socket: UnixSocket, launched: pid_t?, sameProgram: Bool = true,
        program: String = "/proc/self/exe"
    ) throws {
        let peer = try socket.peerCredentials()
        let me = geteuid()
        guard peer.uid == me else { throw Verdict.refused("it runs as uid \(peer.uid), not as you") }
        guard peer.pid > 0, let status = readStatus(peer.pid) else {
            try checkStillRunning(peer.pid)
            throw Verdict.refused("its process (pid \(peer.pid)) cannot be examined")
        }
        guard status.uids.count == 4, status.uids.allSatisfy({ $0 == me }) else {
            throw Verdict.refused("pid \(peer.pid) does not run wholly as you (uids \(status.uids))")
        }
        guard status.tracer == 0 else {
            throw Verdict.refused("pid \(peer.pid) is being traced (TracerPid \(status.tracer))")
        }
        guard sameProgram else { return }
        var mine = stat(), theirs = stat()
        guard stat(program, &mine) == 0 else { throw Verdict.refused("cannot examine the kc executable \(program)") }
        if stat("/proc/\(peer.pid)/exe", &theirs) == 0 {
            guard theirs.st_dev == mine.st_dev && theirs.st_ino == mine.st_ino else {
                throw Verdict.refused("pid \(peer.pid) runs another program than this kc")
            }
            return
        }
        let why = errno
        guard why == EACCES || why == EPERM else {
            // A user process always has a program; the kernel answers ENOENT only once the
            // process is tearing itself down (killed, before it is even a zombie) or gone.
            if why == ENOENT { throw exited(peer.pid) }
            try checkStillRunning(peer.pid)
            throw Verdict.refused("pid \(peer.pid)'s program cannot be examined: \(String(cString: strerror(why)))")
        }
        // Hidden because the peer is non-dumpable, as the real agent is.
        guard let launched, launched == peer.pid else { throw Verdict.unverifiable(pid: peer.pid) }
    }

    /// errSecIO when `pid` has exited: its /proc entry is gone, or it is a zombie (dead,
    /// not yet reaped, so its program cannot be examined any more).
    private static func checkStillRunning(_ pid: Int32) throws {
        guard pid > 0, hasExited(pid) else { return }
        throw exited(pid)
    }

    /// The error for a peer that exited during the request.
    private static func exited(_ pid: Int32) -> KeychainError {
        KeychainError(
            errSecIO, "the kc agent (pid \(pid)) exited during the request; nothing was sent",
            hint: "run the command again (kc unlock first if the keychain was unlocked)")
    }

    /// Whether `/proc/PID/stat` is gone or gives the state Z (zombie) or X (dead).
    private static func hasExited(_ pid: Int32) -> Bool {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT || errno == ESRCH }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return n == 0 || errno == ESRCH }
        // "pid (comm) S …": the state follows the last ')' (comm may hold parentheses).
        guard let close = buffer[0..<n].lastIndex(of: UInt8(ascii: ")")), close + 2 < n else { return false }
        let state = buffer[close + 2]
        return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X")
    }

    /// The uids and TracerPid lines of `/proc/PID/status` (readable for any process).
    private static func readStatus(_ pid: Int32) -> (uids: [UInt32], tracer: Int32)? {
        ProcessStatus.read(pid).map { ($0.uids, $0.tracer) }
    }
}
