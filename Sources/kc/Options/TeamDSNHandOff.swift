import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kc team … --dsn DSN` without the DSN in kc-team's command line (`docs/team.md`,
/// "Keeping a database password out of the process list"): a command line is readable by
/// every user of the machine (`ps`, /proc/PID/cmdline) for as long as the process runs,
/// and kc execs kc-team, which would keep kc's arguments. Each `--dsn VALUE` (or
/// `--dsn=VALUE`) before a `--` becomes `--dsn-fd N`: VALUE is written into a pipe whose
/// read end kc-team inherits as descriptor N, which only this user (and root) can open.
/// The pipe is close-on-exec from birth; `inheritable` clears the flag on its read ends
/// only in `TeamCommand.exec`, immediately before the exec.
/// kc-team warns when the DSN holds a password all the same: kc's own command line held
/// it until the exec.
enum TeamDSNHandOff {
    /// The largest DSN handed over (a pipe holds 64 KiB without a reader).
    static let maxLength = 60_000

    /// `arguments` with every `--dsn` value moved into a pipe, and the pipes' read ends
    /// (still close-on-exec: `inheritable` lets them through the exec).
    /// - Throws: errSecParam for a DSN over `maxLength` bytes; errSecIO when no pipe can be had.
    static func arguments(_ arguments: [String]) throws -> (arguments: [String], descriptors: [Int32]) {
        var out: [String] = []
        var descriptors: [Int32] = []
        func handOff(_ dsn: String) throws -> Int32 {
            do {
                let fd = try Self.handOff(dsn)
                descriptors.append(fd)
                return fd
            } catch {
                descriptors.forEach { close($0) }
                throw error
            }
        }
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" {
                out += arguments[i...]
                break
            }
            if a == "--dsn", i + 1 < arguments.count {
                out += ["--dsn-fd", String(try handOff(arguments[i + 1]))]
                i += 2
                continue
            }
            if a.hasPrefix("--dsn=") {
                out += ["--dsn-fd", String(try handOff(String(a.dropFirst(6))))]
                i += 1
                continue
            }
            out.append(a)
            i += 1
        }
        return (out, descriptors)
    }

    /// Lets `descriptors` survive the exec that follows at once (kc runs no other thread
    /// that could spawn meanwhile).
    static func inheritable(_ descriptors: [Int32]) {
        for fd in descriptors { _ = fcntl(fd, F_SETFD, 0) }
    }

    /// Writes `dsn` into a new close-on-exec pipe and answers its read end.
    private static func handOff(_ dsn: String) throws -> Int32 {
        var bytes = Array(dsn.utf8) + [0x0a]
        defer { Sodium.wipe(&bytes) }
        guard bytes.count <= maxLength else { throw KeychainError(errSecParam, "the --dsn value is over \(maxLength) bytes") }
        guard let fds = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe for the DSN") }
        defer { close(fds[1]) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fds[0])
                throw KeychainError(errSecIO, "cannot write the DSN into a pipe: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        return fds[0]
    }
}
