import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// kc's own provider, found serving a bus by `kc secret-service --start`: its pid (as the
/// bus says), the prompt options it was started with (its command line), and a way to
/// stop it so that `--start --replace` can start one with other options
/// (docs/secret-service.md, "Setting it up").
struct RunningProvider {
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

    /// The provider that owns the name on `bus` (the caller checked it is kc's, this user's).
    static func find(on bus: BusConnection) -> RunningProvider? {
        guard
            case .uint32(let pid)? = try? bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                [.string(SecretServiceProvider.busName)]
            ).first, pid > 0, pid <= UInt32(Int32.max)
        else { return nil }
        return RunningProvider(pid: Int32(pid), options: commandLine(of: Int32(pid)).map { PromptOptions(Array($0.dropFirst())) })
    }

    /// Stops it (SIGTERM, then SIGKILL) and waits until the name is free.
    /// - Throws: Failed when it still owns the name after 5 s.
    func stop(on bus: BusConnection) throws(BusError) {
        _ = kill(pid, SIGTERM)
        let deadline = Deadline.after(seconds: 5)
        var killed = false
        while try ProviderLauncher.ownerIsKC(bus) == true {
            guard Deadline.now < deadline else {
                throw .failed("the kc Secret Service (pid \(pid)) did not stop within 5 s; stop it yourself (kill \(pid))")
            }
            if !killed && Deadline.after(seconds: 3) > deadline {
                _ = kill(pid, SIGKILL)
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
