import Foundation
import Testing
import KCTestSupport

/// Issue 18: the Secret Service provider never hands out the secret of an item that
/// requires user presence (any program of the session may ask it over D-Bus, and nobody
/// types a password for that request): GetSecret fails with AccessDenied, GetSecrets leaves
/// the item out, its attributes stay visible; other items are served as before.
@Suite struct UserPresenceProviderTests {
    @Test func aProtectedSecretIsNotHandedOut() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        // A protected secret is written in kc's own process, with the keychain's password
        // (issue 29, item 8: it never crosses the agent's socket).
        #expect(try home.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711"], password: KCHome.password).status == 0)
        #expect(try home.kc(["add", "-s", "news", "-a", "me", "-w", "plain"]).status == 0)
        var out = try bus.run(["secret-tool", "lookup", "service", "bank", "account", "me"])
        #expect(out.status != 0 && !out.stdout.contains("pin-4711"), "\(out.stdout) \(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "news", "account", "me"])
        #expect(out.status == 0 && out.stdout == "plain", "\(out.stderr)")
        out = try bus.run([
            "/usr/bin/python3", "-c",
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            item = list(col.search_items({'service': 'bank', 'account': 'me'}))[0]
            print(item.get_attributes().get('account'))
            try:
                print(item.get_secret())
            except Exception as e:
                print(type(e).__name__, e)
            """
        ])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.hasPrefix("me\n"), "the attributes stay visible: \(out.stdout)")
        #expect(out.stdout.contains("AccessDenied") && out.stdout.contains("requires user presence"), "\(out.stdout)")
        #expect(!out.stdout.contains("pin-4711"))
        #expect(try home.kc(["lock"]).status == 0)
    }

    /// Issue 29, item 8: the provider behind an impostor that relays the agent's socket
    /// (`AgentRelay`). Reads go through the relay; the protected secret is still refused
    /// (the provider takes no proof, and none goes to the socket), and the relay records
    /// neither the keychain password nor the protected secret.
    @Test func aRelayAtTheAgentSocketGetsNoPasswordAndNoProtectedSecret() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711-ss"], password: KCHome.password).status == 0)
        #expect(try home.kc(["add", "-s", "news", "-a", "me", "-w", "plain"], password: KCHome.password).status == 0)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let relay = try AgentRelay.start(home)
        defer { relay.stop() }
        let bus = try PrivateBus(home)
        var out = try bus.run(["secret-tool", "lookup", "service", "news", "account", "me"])
        #expect(out.status == 0 && out.stdout == "plain", "\(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "bank", "account", "me"])
        #expect(out.status != 0 && !out.stdout.contains("pin-4711-ss"), "\(out.stdout) \(out.stderr)")
        #expect(relay.connections >= 2, "the provider went through the relay")
        #expect(!relay.received(KCHome.password), "the relay received the keychain password")
        #expect(!relay.received("pin-4711-ss"), "the relay received the protected secret")
    }
}
