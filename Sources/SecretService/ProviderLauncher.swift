import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kc secret-service --start`: a Secret Service wherever the shell is, as `ssh-agent -s`
/// gives an agent. On a reachable session bus it starts the provider there (or finds it
/// running); where there is none (SSH, containers, CI) it starts a private `dbus-daemon`
/// first. Either way it prints the shell lines that point clients at that bus.
package enum ProviderLauncher {
    /// Says what happened, for the caller's stderr.
    package typealias Note = (String) -> Void

    /// Starts what is missing and returns the lines to `eval`.
    /// - Parameter executable: the provider's own binary, started detached on the bus.
    /// - Parameter arguments: more options for the provider (pinentry, terminal, timeout).
    package static func start(executable: String, replace: Bool, arguments extra: [String] = [], note: Note) throws(BusError) -> String {
        var address = environment("DBUS_SESSION_BUS_ADDRESS")
        var daemonPID: String?
        var bus = address != nil || sessionSocketExists() ? try? BusConnection(address: address) : nil
        if bus == nil {
            let started = try startDaemon()
            address = started.address
            daemonPID = started.pid
            bus = try BusConnection(address: started.address)
            note("started a private D-Bus daemon (pid \(started.pid)) at \(started.address)")
        }
        guard let bus else { throw .failed("no bus") }
        if try ownerIsKC(bus) == false {
            if !replace {
                throw BusError(
                    "org.freedesktop.DBus.Error.AddressInUse",
                    "\(SecretServiceProvider.busName) is owned by \(bus.ownerDescription(of: SecretServiceProvider.busName)); stop it, or pass --replace to take the name over"
                )
            }
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
        } else {
            note("the kc Secret Service already serves \(SecretServiceProvider.busName)")
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

    private static func sessionSocketExists() -> Bool {
        guard let runtime = environment("XDG_RUNTIME_DIR") else { return false }
        var st = stat()
        return stat(runtime + "/bus", &st) == 0
    }

    /// Starts `dbus-daemon --session --fork` and reads the address and pid it prints.
    private static func startDaemon() throws(BusError) -> (address: String, pid: String) {
        guard let pipe = CloseOnExec.pipe() else { throw .failed("cannot make a pipe") }
        defer { close(pipe[0]) }
        do {
            try spawn(["dbus-daemon", "--session", "--fork", "--nopidfile", "--print-address=1", "--print-pid=1"], stdout: pipe[1])
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
        return (lines[0], lines[1])
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
