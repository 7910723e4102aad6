import KeychainCore
import POSIXSupport
import AgentWire
#if canImport(Glibc)
import Glibc
#endif

/// `kc secret-service --start`: a Secret Service wherever the shell is, as `ssh-agent -s`
/// gives an agent. On a reachable session bus it starts the provider there (or finds it
/// running); where there is none (SSH, containers, CI) it uses the private `dbus-daemon` at a
/// fixed socket in the agent folder (`privateBusSocket`), starting it when none listens
/// there, as gpg-agent keeps its socket: a second `--start` finds the bus and provider of
/// the first and prints the same lines. Either way it prints the shell lines that point
/// clients at that bus.
package enum ProviderLauncher {
    /// The private bus's socket in the agent folder (`AgentPaths`, 0700, checked).
    package static let privateBusSocketName = "secret-service-bus.sock"

    /// Says what happened, for the caller's stderr.
    package typealias Note = (String) -> Void

    /// Starts what is missing and returns the lines to `eval`.
    /// - Parameter executable: the provider's own binary, started detached on the bus.
    /// - Parameter arguments: more options for the provider (pinentry, terminal, timeout).
    package static func start(executable: String, replace: Bool, arguments extra: [String] = [], note: Note) throws(BusError) -> String {
        var address = environment("DBUS_SESSION_BUS_ADDRESS")
        var daemonPID: String?
        var bus = address != nil || sessionSocketExists() ? try? BusConnection(address: address) : nil
        // Held until the provider serves, so that two --start at once make one bus.
        var lock: Int32 = -1
        defer { if lock >= 0 { close(lock) } }
        if bus == nil {
            let folder = AgentPaths()
            do {
                try folder.check(create: true)
            } catch let error as KeychainError {
                throw .failed("no private folder for the D-Bus daemon's socket: \(error.message)" + (error.hint.map { "; hint: \($0)" } ?? ""))
            } catch {
                throw .failed("no private folder for the D-Bus daemon's socket: \(error)")
            }
            let socket = folder.directory + "/" + privateBusSocketName
            guard socket.utf8.count < 108 else {
                throw .failed("the socket path \(socket) is too long for a Unix socket; set KC_AGENT_DIR to a shorter folder")
            }
            lock = open(folder.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if lock >= 0 { try waitForLock(lock, folder: folder.directory) }
            let privateAddress = "unix:path=" + socket
            address = privateAddress
            // Asked with a short deadline first: sd-bus would wait 90 s for a listener
            // that never answers, holding the lock.
            switch BusSocketProbe.probe(socket) {
            case .silent(let why):
                throw .failed(
                    "something listens at \(socket) but is not a D-Bus daemon: \(why). If it is no program of yours that should be there, remove it (rm \(socket)) and run --start again"
                )
            case .daemon:
                let running = try BusConnection(address: privateAddress)
                bus = running
                note("found a D-Bus daemon (pid \(daemonPIDText(running))) at \(privateAddress) and uses it")
            case .nobody:
                let pid = try startDaemon(address: privateAddress)
                bus = try BusConnection(address: privateAddress)
                note("started a private D-Bus daemon (pid \(pid)) at \(privateAddress)")
            }
        }
        guard let bus else { throw .failed("no bus") }
        // The private bus, whether found by its socket or by the variable an earlier
        // `eval` set: its pid line too, so that every --start prints the same lines.
        if let address, address == "unix:path=" + AgentPaths().directory + "/" + privateBusSocketName {
            daemonPID = daemonPIDText(bus)
        }
        if try ownerIsKC(bus) == false {
            if !replace {
                throw BusError(
                    "org.freedesktop.DBus.Error.AddressInUse",
                    "\(SecretServiceProvider.busName) is owned by \(bus.ownerDescription(of: SecretServiceProvider.busName)); stop it, or pass --replace to take the name over"
                )
            }
        }
        // kc's own provider, already serving: --replace stops it to start one with these
        // options; without it, it is reused, and a difference in its prompt options is said.
        var running = try ownerIsKC(bus) == true ? RunningProvider.find(on: bus, executable: executable) : nil
        if replace, let found = running {
            try found.stop(on: bus)
            note("stopped the kc Secret Service (pid \(found.pid)) to start one with these options")
            running = nil
        }
        if try ownerIsKC(bus) != true {
            var arguments = [executable, "--detach"] + extra
            if let address { arguments += ["--address", address] }
            if replace { arguments.append("--replace") }
            try spawn(arguments, stdout: nil)
            let deadline = Deadline.after(seconds: 10)
            while try ownerIsKC(bus) != true {
                guard Deadline.now < deadline else { throw .failed("the provider did not take \(SecretServiceProvider.busName) within 10 s") }
                usleep(20_000)
            }
            note("the kc Secret Service serves \(SecretServiceProvider.busName)")
            if let reason = NobodyToAsk.reason(pinentry: option("--pinentry", in: extra), tty: option("--tty", in: extra)) {
                note(NobodyToAsk.startNote(reason))
            }
        } else {
            note("the kc Secret Service (pid \(pidText(of: SecretServiceProvider.busName, on: bus))) already serves \(SecretServiceProvider.busName)")
            let wanted = RunningProvider.PromptOptions(extra)
            if let options = running?.options, options != wanted {
                note(
                    "it was started with \(options.text), not \(wanted.text), and keeps those; run `kc secret-service --start --replace` with these options to restart it with them"
                )
            }
        }
        var lines = ""
        if let address { lines += "DBUS_SESSION_BUS_ADDRESS=\(shellQuoted(address)); export DBUS_SESSION_BUS_ADDRESS;\n" }
        if let daemonPID { lines += "DBUS_SESSION_BUS_PID=\(daemonPID); export DBUS_SESSION_BUS_PID;\n" }
        return lines
    }

    /// nil when nobody owns the name, true when a kc provider of this user does, false for
    /// another program. The program's name is only a hint anyone can give their process;
    /// the uid is the bus's own word, so another user's process is never taken for kc.
    static func ownerIsKC(_ bus: BusConnection) throws(BusError) -> Bool? {
        let has = try bus.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
            [.string(SecretServiceProvider.busName)])
        guard has.first?.boolean == true else { return nil }
        guard bus.ownerUID(of: SecretServiceProvider.busName) == getuid() else { return false }
        return bus.ownerDescription(of: SecretServiceProvider.busName).hasPrefix("kc-secret-serv")
    }

    /// Waits for the agent folder's lock (held by another `--start` while it starts the
    /// daemon and the provider, each within 10 s), at most 30 s.
    private static func waitForLock(_ fd: Int32, folder: String) throws(BusError) {
        let deadline = Deadline.after(seconds: 30)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { return }
            guard Deadline.now < deadline else {
                throw .failed("another kc secret-service --start has held the lock on \(folder) for 30 s; try again when it is done")
            }
            usleep(50_000)
        }
    }

    private static func sessionSocketExists() -> Bool {
        guard let runtime = environment("XDG_RUNTIME_DIR") else { return false }
        var st = stat()
        return stat(runtime + "/bus", &st) == 0
    }

    /// The value after `name` in `arguments`, if any.
    private static func option(_ name: String, in arguments: [String]) -> String? {
        guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
        return arguments[i + 1]
    }

    /// The pid of the bus daemon (dbus-daemon answers for itself), as text.
    private static func daemonPIDText(_ bus: BusConnection) -> String { pidText(of: "org.freedesktop.DBus", on: bus) }

    /// The pid of the process that owns `name` on `bus`, as the bus says, as text.
    private static func pidText(of name: String, on bus: BusConnection) -> String {
        guard
            case .uint32(let pid)? = try? bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                [.string(name)]
            ).first
        else { return "unknown" }
        return String(pid)
    }

    /// Starts `dbus-daemon --session --fork` listening at `address` and reads the pid it
    /// prints (a stale socket left there is replaced by dbus-daemon itself).
    private static func startDaemon(address: String) throws(BusError) -> String {
        guard let pipe = CloseOnExec.pipe() else { throw .failed("cannot make a pipe") }
        defer { close(pipe[0]) }
        do {
            try spawn(
                ["dbus-daemon", "--session", "--fork", "--nopidfile", "--address=" + address, "--print-address=1", "--print-pid=1"],
                stdout: pipe[1])
        } catch {
            close(pipe[1])
            throw BusError.failed("cannot start dbus-daemon (install the dbus-daemon package): \(error.message)")
        }
        close(pipe[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Deadline.after(seconds: 10)
        while output.filter({ $0 == 0x0A }).count < 2 && Deadline.now < deadline {
            var fds = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            guard poll(&fds, 1, 100) >= 0 else { break }
            if fds.revents == 0 { continue }
            let n = read(pipe[0], &buffer, buffer.count)
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count >= 2, lines[0].hasPrefix("unix:"), Int(lines[1]) != nil else {
            throw .failed("dbus-daemon did not say where it listens")
        }
        return lines[1]
    }

    /// Starts `arguments` (`ChildProcess`), stdout on `stdout` (else /dev/null); waits only
    /// for `dbus-daemon --fork`, whose first process exits once the daemon listens (the
    /// provider detaches and is reaped by whoever outlives it).
    static func spawn(_ arguments: [String], stdout: Int32?) throws(BusError) {
        let pid = try ChildProcess.spawn(arguments, stdout: stdout)
        var status: Int32 = 0
        if arguments[0] == "dbus-daemon" { _ = waitpid(pid, &status, 0) }
    }

    static func shellQuoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }

    static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
