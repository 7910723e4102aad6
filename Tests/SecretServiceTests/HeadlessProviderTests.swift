import Foundation
import Testing
import KCTestSupport

/// Where nobody can answer an unlock prompt (a script, a CI job, `ssh host cmd`: no display,
/// no terminal, no pinentry), a client asking for a locked keychain fails at once, as `kc`
/// exits 36 at once, instead of waiting the whole prompt timeout in silence; and
/// `kc secret-service --start` run again reuses the bus and provider it started.
@Suite struct HeadlessProviderTests {
    /// A keychain holding one item, locked, and a bus whose provider would ask through
    /// pinentry (`provider`) with a 60 s prompt timeout.
    static func locked(provider: [String], daemonEnvironment: [String: String] = [:]) throws -> (KCHome, PrivateBus) {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["add", "-s", "svc", "-a", "u", "-w", "s3cr3t"], password: KCHome.password).status == 0)
        #expect(try home.kc(["lock"]).status == 0)
        return (home, try PrivateBus(home, promptTimeout: 60, provider: provider, daemonEnvironment: daemonEnvironment))
    }

    /// No display and no terminal: secret-tool and Python's keyring fail well within a 10 s
    /// deadline (the prompt timeout is 60 s); once `kc unlock` ran, the lookup works.
    @Test func aLockedLookupWithNobodyToAskFailsAtOnce() throws {
        let (home, bus) = try Self.locked(provider: ["--pinentry", "/usr/bin/pinentry-curses"])
        var out = try bus.run(["secret-tool", "lookup", "service", "svc", "account", "u"], timeout: 10)
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)\(out.stderr)")
        out = try bus.python(
            """
            import keyring.errors
            from keyring.backends import SecretService
            try:
                print(SecretService.Keyring().get_password('svc', 'u'))
            except keyring.errors.KeyringLocked as e:
                print('locked', e)
            """, timeout: 10)
        #expect(out.status == 0 && out.stdout.hasPrefix("locked "), "\(out.stdout)\(out.stderr)")
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        out = try bus.run(["secret-tool", "lookup", "service", "svc", "account", "u"], timeout: 10)
        #expect(out.status == 0 && out.stdout == "s3cr3t", "\(out.stdout)\(out.stderr)")
    }

    /// A display, but no pinentry program: nobody can answer either.
    @Test func noPinentryProgramIsNobodyToAsk() throws {
        let (_, bus) = try Self.locked(provider: ["--pinentry", "/nonexistent/pinentry"], daemonEnvironment: ["DISPLAY": ":99"])
        let out = try bus.run(["secret-tool", "lookup", "service", "svc", "account", "u"], timeout: 10)
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)\(out.stderr)")
    }

    /// The processes of this test's home whose command line holds `program`.
    static func processes(_ program: String, of home: KCHome) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return line.contains(program) && line.contains(home.directory)
        }
    }

    /// Two `--start` with no session bus (a script, a CI job): one private dbus-daemon at a
    /// fixed socket in the agent folder and one provider; the second prints the first's
    /// lines, which work; where nobody can answer, `--start` says so and a locked lookup
    /// fails at once.
    @Test func startTwiceReusesTheBusAndProvider() throws {
        let home = try KCHome()
        try home.createKeychain()
        let first = try home.kc(["secret-service", "--start"])
        let daemon = first.stdout.split(separator: "\n").first { $0.hasPrefix("DBUS_SESSION_BUS_PID=") }
            .flatMap { Int32($0.dropFirst("DBUS_SESSION_BUS_PID=".count).prefix { $0.isNumber }) }
        defer {
            if let daemon { kill(daemon, SIGTERM) }
            // The provider leaves with its bus.
            for _ in 0..<200 where !Self.processes("kc-secret-service", of: home).isEmpty { usleep(50_000) }
            #expect(Self.processes("kc-secret-service", of: home).isEmpty, "the provider outlived its bus")
        }
        #expect(first.status == 0 && daemon != nil, "\(first.stdout)\(first.stderr)")
        let socket = home.environment["KC_AGENT_DIR", default: ""] + "/secret-service-bus.sock"
        #expect(first.stdout.contains("DBUS_SESSION_BUS_ADDRESS='unix:path=\(socket)'"), "\(first.stdout)")
        #expect(first.stderr.contains("nobody can answer an unlock prompt here"), "\(first.stderr)")
        let second = try home.kc(["secret-service", "--start"])
        #expect(second.status == 0 && second.stdout == first.stdout, "\(first.stdout)\(second.stdout)\(second.stderr)")
        #expect(second.stderr.contains("found a D-Bus daemon") && second.stderr.contains("already serves"), "\(second.stderr)")
        #expect(Self.processes("kc-secret-service", of: home).count == 1, "one provider")
        #expect(Self.processes("dbus-daemon", of: home).count == 1, "one bus")
        // The second's lines work: a store and lookup there, then a locked lookup fails at once.
        let script = """
            eval "$1"
            printf %s v1 | secret-tool store --label=t service s username u || exit 3
            secret-tool lookup service s username u; echo
            kc lock
            secret-tool lookup service s username u && exit 4
            echo dismissed
            """
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        var env = home.environment
        env["PATH"] = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let out = try Spawn.run(["/bin/sh", "-c", script, "sh", second.stdout], environment: env, timeout: 10)
        #expect(out.status == 0 && out.stdout == "v1\ndismissed\n", "\(out.stdout)\(out.stderr)")
    }

    /// The daemon's pid from --start's lines.
    static func daemonPID(_ lines: String) -> Int32? {
        lines.split(separator: "\n").first { $0.hasPrefix("DBUS_SESSION_BUS_PID=") }
            .flatMap { Int32($0.dropFirst("DBUS_SESSION_BUS_PID=".count).prefix { $0.isNumber }) }
    }

    /// A second `--start` with other prompt options says that the running provider keeps
    /// its own; `--start --replace` stops kc's provider and starts one with the new options.
    @Test func aSecondStartWithNoPinentryIsNotSilentlyIgnored() throws {
        let home = try KCHome()
        try home.createKeychain()
        let first = try home.kc(["secret-service", "--start"])
        let daemon = Self.daemonPID(first.stdout)
        defer {
            if let daemon { kill(daemon, SIGTERM) }
            for _ in 0..<200 where !Self.processes("kc-secret-service", of: home).isEmpty { usleep(50_000) }
            #expect(Self.processes("kc-secret-service", of: home).isEmpty, "the provider outlived its bus")
        }
        #expect(first.status == 0 && daemon != nil, "\(first.stdout)\(first.stderr)")
        let second = try home.kc(["secret-service", "--start", "--no-pinentry"])
        #expect(second.status == 0 && second.stdout == first.stdout, "\(second.stdout)\(second.stderr)")
        #expect(
            second.stderr.contains(
                "it was started with --pinentry pinentry, no --tty, --prompt-timeout 60, not --no-pinentry, no --tty, --prompt-timeout 60, and keeps those; run `kc secret-service --start --replace`"
            ), "\(second.stderr)")
        let before = Self.processes("kc-secret-service", of: home)
        #expect(before.count == 1, "one provider")
        let third = try home.kc(["secret-service", "--start", "--replace", "--no-pinentry"])
        #expect(third.status == 0 && third.stdout == first.stdout, "\(third.stdout)\(third.stderr)")
        #expect(third.stderr.contains("stopped the kc Secret Service (pid \(before.first ?? 0))"), "\(third.stderr)")
        let after = Self.processes("kc-secret-service", of: home)
        #expect(after.count == 1 && after != before, "one new provider: \(before) \(after)")
        let line = after.first.flatMap { FileManager.default.contents(atPath: "/proc/\($0)/cmdline") } ?? Data()
        #expect(String(decoding: line, as: UTF8.self).contains("--no-pinentry"), "the new provider has the new options")
        let fourth = try home.kc(["secret-service", "--start", "--no-pinentry"])
        #expect(fourth.status == 0 && !fourth.stderr.contains("it was started with"), "\(fourth.stderr)")
    }

    /// `--start --replace` stops only kc's own provider: a Python process renamed
    /// kc-secret-service (PR_SET_NAME) that owns org.freedesktop.secrets was taken for it
    /// by its name and sent SIGTERM. Its program (/proc/PID/exe) is not the
    /// kc-secret-service beside kc, so it is not signalled and --start says so.
    @Test func aProcessNamedLikeTheProviderIsNotStopped() throws {
        let home = try KCHome()
        try home.createKeychain()
        let first = try home.kc(["secret-service", "--start"])
        let daemon = Self.daemonPID(first.stdout)
        defer { if let daemon { kill(daemon, SIGTERM) } }
        #expect(first.status == 0 && daemon != nil, "\(first.stdout)\(first.stderr)")
        for pid in Self.processes("kc-secret-service", of: home) { kill(pid, SIGTERM) }
        for _ in 0..<200 where !Self.processes("kc-secret-service", of: home).isEmpty { usleep(20_000) }
        let address =
            first.stdout.split(separator: "\n").first { $0.hasPrefix("DBUS_SESSION_BUS_ADDRESS=") }
            .map { String($0.dropFirst("DBUS_SESSION_BUS_ADDRESS=".count).prefix { $0 != ";" }).replacingOccurrences(of: "'", with: "") } ?? ""
        // Started through Spawn (close-on-exec pipes, its own process group, a deadline),
        // it says on a file that it owns the name; it is killed when the test ends.
        let ready = home.directory + "/impostor-ready"
        let impostor = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import ctypes, sys, time
                ctypes.CDLL(None).prctl(15, b"kc-secret-service", 0, 0, 0)
                from jeepney import DBusAddress, new_method_call
                from jeepney.io.blocking import open_dbus_connection
                bus = DBusAddress('/org/freedesktop/DBus', bus_name='org.freedesktop.DBus', interface='org.freedesktop.DBus')
                c = open_dbus_connection('SESSION')
                r = c.send_and_get_reply(new_method_call(bus, 'RequestName', 'su', ('org.freedesktop.secrets', 4)))
                open(sys.argv[1], 'w').write(f'owned {r.body[0]}')
                time.sleep(20)
                """, ready
            ],
            environment: ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { _, b in b },
            timeout: 30)
        defer { withExtendedLifetime(impostor) {} }
        var owned = ""
        for _ in 0..<250 where owned.isEmpty {
            owned = (try? String(contentsOfFile: ready, encoding: .utf8)) ?? ""
            if owned.isEmpty { usleep(20_000) }
        }
        #expect(owned.hasPrefix("owned"), "\(owned)")
        let replace = try home.kc(["secret-service", "--start", "--replace"])
        #expect(replace.status != 0 && replace.stderr.contains("is not kc's provider"), "\(replace.stderr)")
        usleep(300_000)
        // Alive, and not a zombie: /proc/PID/stat's state after the command name.
        let stat = (try? String(contentsOfFile: "/proc/\(impostor.pid)/stat", encoding: .utf8)) ?? ""
        let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init)
        #expect(state != nil && state != "Z", "the impostor was stopped: \(stat)")
    }

    /// Something listening at the private bus's socket that never speaks D-Bus makes
    /// --start fail within seconds (sd-bus alone waits 90 s), naming the socket and how to
    /// remove it.
    @Test func aSilentListenerAtTheBusSocketFailsStartQuickly() throws {
        let home = try KCHome()
        let folder = home.environment["KC_AGENT_DIR", default: home.directory + "/agent"]
        mkdir(folder, 0o700)
        let socketPath = folder + "/secret-service-bus.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(socketPath.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 8) == 0, "\(socketPath)")
        let started = Date()
        let out = try KCBinary.run(["secret-service", "--start"], environment: home.environment, timeout: 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(out.status == 1 && elapsed < 15, "\(elapsed) s: \(out.stdout)\(out.stderr)")
        #expect(
            out.stderr.contains("something listens at \(socketPath) but is not a D-Bus daemon")
                && out.stderr.contains("rm \(socketPath)"), "\(out.stderr)")
        #expect(out.stdout.isEmpty, "no lines to eval: \(out.stdout)")
    }
}
