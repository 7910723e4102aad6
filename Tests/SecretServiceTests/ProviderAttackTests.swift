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
}
