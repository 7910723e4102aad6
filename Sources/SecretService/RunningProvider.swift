internal import CSystemd
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// kc's own provider, found serving a bus by `kc secret-service --start`: its pid (as the
/// bus says), the prompt options it was started with (its command line), and a way to
/// stop it so that `--start --replace` can start one with other options
/// (docs/secret-service.md, "Setting it up"). Its program is checked to be kc's provider
/// (`/proc/PID/exe` is the `kc-secret-service` beside kc), through a pidfd opened first, and
/// the signals go through that pidfd: a process that merely took kc's name is never stopped.
final class RunningProvider {
    /// The options that decide how an unlock prompt is answered.
    struct PromptOptions: Equatable {
        /// The pinentry program; nil for `--no-pinentry`.
        var pinentry: String? = "pinentry"
        /// The terminal given with `--tty`.
        var tty: String?
        /// `--prompt-timeout`, in seconds.
        var timeout = 60.0

        /// The options among a provider's arguments (the provider's defaults for the rest).
        init(_ arguments: [String]) {
            var rest = arguments[...]
            while let word = rest.popFirst() {
                switch word {
                case "--no-pinentry": pinentry = nil
                case "--pinentry": pinentry = rest.popFirst()
                case "--tty": tty = rest.popFirst()
                case "--prompt-timeout": timeout = rest.popFirst().flatMap(Double.init) ?? timeout
                default: continue
                }
            }
        }

        /// As options on a command line: "--pinentry pinentry, no --tty, --prompt-timeout 60".
        var text: String {
            let seconds = timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)
            return [
                pinentry.map { "--pinentry \($0)" } ?? "--no-pinentry",
                tty.map { "--tty \($0)" } ?? "no --tty",
                "--prompt-timeout \(seconds)"
            ].joined(separator: ", ")
        }
    }

    let pid: Int32
    /// nil when its command line cannot be read.
    let options: PromptOptions?
    /// The process's pidfd, opened before its program was checked.
    private let pidfd: Int32

    private init(pid: Int32, options: PromptOptions?, pidfd: Int32) {
        self.pid = pid
        self.options = options
        self.pidfd = pidfd
    }

    deinit { close(pidfd) }

    /// The provider that owns the name on `bus` (the caller checked it is this user's and
    /// named kc's), when its program is `executable`.
    /// - Throws: AddressInUse when the process that owns the name runs another program.
    static func find(on bus: BusConnection, executable: String) throws(BusError) -> RunningProvider? {
        guard
            case .uint32(let raw)? = try? bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                [.string(SecretServiceProvider.busName)]
            ).first, raw > 0, raw <= UInt32(Int32.max)
        else { return nil }
        let pid = Int32(raw)
        let fd = kc_pidfd_open(pid)
        guard fd >= 0 else { return nil }
        var running = stat(), ours = stat()
        guard stat("/proc/\(pid)/exe", &running) == 0, stat(executable, &ours) == 0,
            running.st_dev == ours.st_dev, running.st_ino == ours.st_ino
        else {
            close(fd)
            throw BusError(
                "org.freedesktop.DBus.Error.AddressInUse",
                "\(SecretServiceProvider.busName) is owned by pid \(pid), which is named kc-secret-service but is not kc's provider (\(executable)); it was not stopped: stop it yourself if it is no program of yours"
            )
        }
        return RunningProvider(pid: pid, options: commandLine(of: pid).map { PromptOptions(Array($0.dropFirst())) }, pidfd: fd)
    }

    /// Stops it (SIGTERM, then SIGKILL, through its pidfd) and waits until the name is free.
    /// - Throws: Failed when it still owns the name after 5 s.
    func stop(on bus: BusConnection) throws(BusError) {
        _ = kc_pidfd_send_signal(pidfd, SIGTERM)
        let deadline = Deadline.after(seconds: 5)
        var killed = false
        while try ProviderLauncher.ownerIsKC(bus) == true {
            guard Deadline.now < deadline else {
                throw .failed("the kc Secret Service (pid \(pid)) did not stop within 5 s; stop it yourself (kill \(pid))")
            }
            if !killed && Deadline.after(seconds: 3) > deadline {
                _ = kc_pidfd_send_signal(pidfd, SIGKILL)
                killed = true
            }
            usleep(20_000)
        }
    }

    /// The arguments of process `pid` (its `/proc/PID/cmdline`), program first.
    private static func commandLine(of pid: Int32) -> [String]? {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[0..<n]
        }
        guard !bytes.isEmpty else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast(bytes.last == 0 ? 1 : 0).map {
            String(decoding: $0, as: UTF8.self)
        }
    }
}
