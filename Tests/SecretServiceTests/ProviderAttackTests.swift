import Foundation
import Testing
import AgentWire
import KCTestSupport

/// Attacks on the provider from the review of issue 17 (docs/secret-service.md, "What
/// another program on the bus can and cannot do"): each test performs one against the real
/// provider on a real dbus-daemon and shows it fails.
@Suite struct ProviderAttackTests {
    /// A password variable in the environment the provider starts with (a CI job that
    /// exports KC_PASSWORD and runs `dbus-run-session`: activation passes the daemon's
    /// environment on) was unset but its bytes stayed in the provider's memory for its
    /// whole life, and in /proc/PID/environ. The provider overwrites them, as kc does.
    @Test(.enabled(if: geteuid() == 0, "reads another process's environment"))
    func aPasswordInTheEnvironmentDoesNotStayInTheProvider() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let password = "ci-password-\(UInt32.random(in: 0...UInt32.max))"
        let bus = try PrivateBus(home, daemonEnvironment: ["KC_PASSWORD": password, "KC_NEW_PASSWORD": password + "-new"])
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "v").status == 0)
        guard let pid = try bus.providerPID() else {
            Issue.record("no provider owns the name")
            return
        }
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        #expect(environ.range(of: Data("DBUS_SESSION_BUS_ADDRESS=".utf8)) != nil, "the provider's environment was read")
        #expect(environ.range(of: Data(password.utf8)) == nil, "the password is still in /proc/\(pid)/environ")
    }

    /// A process of the user bound at the agent's socket (python, so its program is
    /// visible), claiming to hold the default keychain: kc refuses to send it a secret, but
    /// the provider, not being kc, checked only its uids and tracing and sent it the secret
    /// of a CreateItem (and would have sent a new collection's password). The provider now
    /// compares the agent's program with the kc installed beside it, as kc does with itself.
    @Test func aVisibleImpostorAtTheAgentSocketGetsNoSecret() throws {
        let home = try KCHome()
        try home.createKeychain()
        let log = try AgentImpostor.start(home, kind: .dumpable, holds: home.defaultKeychain, version: AgentProtocol.version)
        let bus = try PrivateBus(home)
        let secret = "for-the-real-agent-only"
        let out = try bus.python("""
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            S = '/org/freedesktop/secrets'
            svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            session = c.send_and_get_reply(new_method_call(svc, 'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
            col = DBusAddress(S + '/collection/login', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Collection')
            r = c.send_and_get_reply(new_method_call(col, 'CreateItem', 'a{sv}(oayays)b',
                                     ({}, (session, b'', b'\(secret)', 'text/plain'), True)))
            print(r.header.message_type.name, r.body)
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.hasPrefix("error") && out.stdout.contains("runs another program than this kc"), "\(out.stdout)")
        let frames = AgentImpostor.received(log)
        #expect(!frames.isEmpty, "the provider asked it something: \(frames)")
        let hex = Array(secret.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(!frames.contains { $0.contains(hex) }, "the impostor received the secret: \(frames)")
    }
}
