import Foundation
import Testing
import KCTestSupport

/// libsecret's own command-line client against kc's provider on a private bus, started by
/// D-Bus activation on the first call, with a real agent holding a real keychain.
@Suite struct SecretToolTests {
    /// A home with an unlocked default keychain and a bus.
    static func unlocked(promptTimeout: Double = 5) throws -> (KCHome, PrivateBus) {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        return (home, try PrivateBus(home, promptTimeout: promptTimeout))
    }

    @Test func storeLookupSearchClear() throws {
        let (home, bus) = try Self.unlocked()
        var out = try bus.run(
            ["secret-tool", "store", "--label=GitHub token", "service", "github.com", "username", "alice"],
            stdin: "ghp-secret-1")
        #expect(out.status == 0, "\(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "github.com", "username", "alice"])
        #expect(out.status == 0 && out.stdout == "ghp-secret-1", "\(out.stdout) \(out.stderr)")
        // The two worlds meet: kc finds it by service and account.
        out = try home.kc(["find", "-s", "github.com", "-a", "alice", "-w"])
        #expect(out.status == 0 && out.stdout == "ghp-secret-1", "\(out.stderr)")
        // Storing the same attributes again replaces the secret: still one item.
        out = try bus.run(
            ["secret-tool", "store", "--label=GitHub token", "service", "github.com", "username", "alice"],
            stdin: "ghp-secret-2")
        #expect(out.status == 0, "\(out.stderr)")
        out = try bus.run(["secret-tool", "search", "--all", "service", "github.com"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("attribute.username = alice") && out.stdout.contains("secret = ghp-secret-2"), "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.components(separatedBy: "secret = ").count == 2, "one item: \(out.stdout)")
        #expect(out.stdout.contains("label = GitHub token"), "\(out.stdout)")
        // No attribute value in an object path.
        #expect(!out.stdout.contains("/github") && !out.stdout.contains("alice]"), "\(out.stdout)")
        out = try bus.run(["secret-tool", "clear", "service", "github.com", "username", "alice"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try bus.run(["secret-tool", "lookup", "service", "github.com", "username", "alice"]).status != 0)
        #expect(try home.kc(["find", "-s", "github.com"]).status == 44)
    }

    /// kc's own items are seen by D-Bus clients with service / account / username.
    @Test func kcItemsAreVisibleToClients() throws {
        let (home, bus) = try Self.unlocked()
        #expect(try home.kc(["add", "-s", "db.internal", "-a", "deploy", "-w", "pg-pass", "-l", "Database"]).status == 0)
        var out = try bus.run(["secret-tool", "lookup", "service", "db.internal", "account", "deploy"])
        #expect(out.status == 0 && out.stdout == "pg-pass", "\(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "db.internal", "username", "deploy"])
        #expect(out.status == 0 && out.stdout == "pg-pass", "\(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "db.internal", "username", "other"])
        #expect(out.status != 0)
        // Binary-safe: a secret with newlines and NULs comes back byte for byte.
        #expect(try home.kc(["add", "-s", "bin", "-a", "x"], stdin: Data([0, 10, 255, 10])).status == 0)
        out = try bus.run([
            "/usr/bin/python3", "-c",
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            items = list(col.search_items({'service': 'bin', 'account': 'x'}))
            print(len(items), items[0].get_secret().hex())
            """
        ])
        #expect(out.status == 0 && out.stdout == "1 000aff0a\n", "\(out.stdout)\(out.stderr)")
    }

    /// A locked keychain: lookup asks to unlock; the prompt completes as soon as
    /// `kc unlock` runs elsewhere, and is dismissed within the timeout when nobody does.
    @Test func lockedKeychainPromptsUntilKcUnlock() throws {
        let (home, bus) = try Self.unlocked(promptTimeout: 20)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "svc", "username", "u"], stdin: "s3").status == 0)
        #expect(try home.kc(["lock"]).status == 0)
        let waiting = try Spawn.start(
            ["/usr/bin/secret-tool", "lookup", "service", "svc", "username", "u"],
            environment: bus.environment, timeout: 30)
        usleep(700_000)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let out = try waiting.finish()
        #expect(out.status == 0 && out.stdout == "s3", "\(out.stdout) \(out.stderr)")
    }

    @Test func aPromptNobodyAnswersIsDismissed() throws {
        let (home, bus) = try Self.unlocked(promptTimeout: 2)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "svc", "username", "u"], stdin: "s3").status == 0)
        #expect(try home.kc(["lock"]).status == 0)
        let started = Date()
        let out = try bus.run(["secret-tool", "lookup", "service", "svc", "username", "u"], timeout: 20)
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)")
        #expect(Date().timeIntervalSince(started) < 10, "dismissed after the 2 s timeout, not the client's")
    }

    /// Lock over the bus locks the keychain in the agent, as `kc lock` does, and Unlock
    /// (`secret-tool search --unlock`) completes when `kc unlock` runs. (`secret-tool lock`
    /// of libsecret 0.20.5 crashes after the provider's correct `Lock` reply, with or
    /// without kc, so Python's secretstorage sends the Lock here.)
    @Test func lockAndUnlockThroughTheBus() throws {
        let (home, bus) = try Self.unlocked(promptTimeout: 20)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "svc", "username", "u"], stdin: "s3").status == 0)
        var out = try bus.python(
            """
            import secretstorage
            col = secretstorage.get_default_collection(secretstorage.dbus_init())
            col.lock()
            print(col.is_locked())
            """)
        #expect(out.status == 0 && out.stdout == "True\n", "\(out.stdout)\(out.stderr)")
        #expect(try home.kc(["status", "--json"]).stdout == "[]\n", "the agent forgot the keychain")
        let waiting = try Spawn.start(
            ["/usr/bin/secret-tool", "search", "--unlock", "service", "svc"],
            environment: bus.environment, timeout: 30)
        usleep(700_000)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        out = try waiting.finish()
        #expect(out.status == 0 && out.stdout.contains("secret = s3"), "\(out.stdout)\(out.stderr)")
    }
}
