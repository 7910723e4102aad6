import Foundation
import KeychainCore
import KCTestSupport

/// A private dbus-daemon for one test, with kc's provider activatable on it (as
/// `make install`'s D-Bus service file makes it on a desktop): the first client call to
/// org.freedesktop.secrets starts `kc-secret-service`. Everything runs with the test's
/// `KCHome` environment, and the daemon (with whatever it started) dies with the test.
final class PrivateBus {
    let home: KCHome
    let address: String
    private let daemon: SpawnedChild
    /// The command prefix that runs the daemon and every client as nobody (`asNobody`).
    let runAs: [String]
    /// The kc that clients run: the one built, or as nobody its copy beside the provider's.
    let kcPath: String

    /// The package's folder (README.md, docs/).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The provider built beside this test bundle.
    static var providerPath: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kc-secret-service").path
    }

    /// - Parameters:
    ///   - promptTimeout: how long the provider's prompts wait for an unlock.
    ///   - anyUser: let other uids connect to the bus (to show the provider refuses them).
    ///   - provider: more options for the provider (by default it never opens a pinentry
    ///     window, even where the tests run on a desktop).
    ///   - daemonEnvironment: more variables for the daemon, which activation passes on to
    ///     the provider.
    ///   - asNobody: run the daemon (so the provider) and every client as uid 65534, a
    ///     normal user without CAP_SYS_PTRACE (the home must be nobody's, made under
    ///     `OtherUser.base`). The provider and kc it runs are copies in the home
    ///     (`OtherUser.install`), which nobody reaches wherever the checkout lives.
    init(
        _ home: KCHome, promptTimeout: Double = 5, anyUser: Bool = false, provider: [String] = ["--no-pinentry"],
        daemonEnvironment: [String: String] = [:], asNobody: Bool = false
    ) throws {
        self.home = home
        runAs = asNobody ? OtherUser.setpriv : []
        var providerPath = Self.providerPath
        var kcPath = KCBinary.path
        if asNobody {
            let copies = try OtherUser.install(["kc", "kc-secret-service"], into: home.directory + "/bin")
            providerPath = copies["kc-secret-service"] ?? providerPath
            kcPath = copies["kc"] ?? kcPath
        }
        self.kcPath = kcPath
        let dir = home.directory + "/bus"
        try FileManager.default.createDirectory(atPath: dir + "/services", withIntermediateDirectories: true)
        if asNobody { for folder in [dir, dir + "/services"] { chown(folder, 65534, 65534) } }
        let socket = dir + "/socket"
        address = "unix:path=" + socket
        try """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=\(([providerPath, "--prompt-timeout", String(promptTimeout)] + provider).joined(separator: " "))

        """.write(toFile: dir + "/services/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <servicedir>\(dir)/services</servicedir>
          \(anyUser ? "<allow_anonymous/>" : "")
          <policy context="default">
            \(anyUser ? "<allow user=\"*\"/>" : "")
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        var env = home.environment
        env["PATH"] = "/usr/bin:/bin"
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env.merge(daemonEnvironment) { _, given in given }
        daemon = try Spawn.start(
            runAs + ["/usr/bin/dbus-daemon", "--config-file=" + dir + "/bus.conf", "--nofork", "--nopidfile"],
            environment: env, timeout: 300)
        let start = Date()
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date().timeIntervalSince(start) < 10 else { throw KeychainError(errSecIO, "dbus-daemon did not listen at \(socket)") }
            usleep(10_000)
        }
        if anyUser { chmod(home.directory, 0o755); chmod(dir, 0o755); chmod(socket, 0o777) }
        // Another uid connects here: fail now, saying why, if it cannot reach the socket.
        if anyUser || asNobody { try OtherUser.checkReachable(socket) }
    }

    deinit { kill(daemon.pid, SIGTERM) }

    /// The environment of a client on this bus.
    var environment: [String: String] {
        var env = home.environment
        env["PATH"] = "/usr/bin:/bin"
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        return env
    }

    /// Runs a client program on this bus (killed, and the test failed, after `timeout`).
    func run(_ argv: [String], stdin: String? = nil, timeout: Double = 30) throws -> KCBinary.Output {
        var argv = argv
        if let program = argv.first, !program.hasPrefix("/") { argv[0] = "/usr/bin/" + program }
        return try Spawn.run(runAs + argv, environment: environment, stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
    }

    /// Runs a Python script with Debian's python3 (its secretstorage, keyring and jeepney).
    func python(_ script: String, timeout: Double = 30) throws -> KCBinary.Output {
        try run(["/usr/bin/python3", "-c", script], timeout: timeout)
    }

    /// kc with this home (and this bus, which kc ignores).
    func kc(_ arguments: [String], password: String? = nil, stdin: String? = nil) throws -> KCBinary.Output {
        var env = environment
        if let password { env["KC_PASSWORD"] = password }
        if !runAs.isEmpty { return try Spawn.run(runAs + [kcPath] + arguments, environment: env, stdin: stdin.map { Data($0.utf8) }) }
        return try KCBinary.run(arguments, environment: env, stdin: stdin.map { Data($0.utf8) })
    }

    /// The pid of the process that owns org.freedesktop.secrets now, if any.
    func providerPID() throws -> Int32? {
        let out = try python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            bus = DBusAddress('/org/freedesktop/DBus', bus_name='org.freedesktop.DBus', interface='org.freedesktop.DBus')
            c = open_dbus_connection('SESSION')
            r = c.send_and_get_reply(new_method_call(bus, 'GetConnectionUnixProcessID', 's', ('org.freedesktop.secrets',)))
            print(r.body[0] if r.header.message_type.name == 'method_return' else '')
            """)
        return Int32(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
