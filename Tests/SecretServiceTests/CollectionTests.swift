import Foundation
import Testing
import KCTestSupport

/// Collections: every keychain is one, and CreateCollection works headless (aws-vault and
/// the Go keyring libraries call it): a new keychain whose password the default keeps.
@Suite struct CollectionTests {
    @Test func everyKeychainIsACollection() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        #expect(try home.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        let out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            print(sorted(col.collection_path for col in secretstorage.get_all_collections(c)))
            print(secretstorage.get_default_collection(c).collection_path)
            print(secretstorage.get_collection_by_alias(c, 'default').get_label())
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(
            out.stdout == """
                ['/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/collection/work']
                /org/freedesktop/secrets/aliases/default
                login

                """, "\(out.stdout)")
    }

    /// `KC_KEYCHAIN=team:NAME` makes a team keychain the CLI's default, never the D-Bus
    /// default collection nor any collection: a desktop app's secret stored through libsecret
    /// stays in the user's own `login` keychain instead of going to a server the whole team
    /// reads (and where any member could plant items in this user's default collection).
    @Test func aTeamKeychainIsNeverACollection() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let bus = try PrivateBus(home, daemonEnvironment: ["KC_KEYCHAIN": "team:infra"])
        let out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            print(sorted(col.collection_path for col in secretstorage.get_all_collections(c)))
            d = secretstorage.get_default_collection(c)
            print(d.get_label())
            d.create_item('app', {'service': 'desktop-app', 'username': 'me'}, b'app-secret')
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout == "['/org/freedesktop/secrets/collection/login']\nlogin\n", "\(out.stdout)")
        // The secret is in the login keychain, where kc reads it without the team.
        let found = try home.kc(["find", "-s", "desktop-app", "-a", "me", "-w"])
        #expect(found.status == 0 && found.stdout == "app-secret", "\(found.stdout)\(found.stderr)")
    }

    /// With the default keychain unlocked, CreateCollection makes a keychain at once; its
    /// random password is an item of the default keychain, and after `kc lock --all`,
    /// unlocking the default keychain is enough to unlock it for D-Bus clients.
    @Test func createCollectionHeadless() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 20)
        var out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.create_collection(c, 'awsvault')
            print(col.collection_path, col.get_label(), col.is_locked())
            col.create_item('aws', {'service': 'aws-vault', 'username': 'dev'}, b'AKIA-secret')
            print(list(col.search_items({'username': 'dev'}))[0].get_secret())
            again = secretstorage.create_collection(c, 'awsvault')
            print(again.collection_path == col.collection_path)
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout == "/org/freedesktop/secrets/collection/awsvault awsvault False\nb'AKIA-secret'\nTrue\n", "\(out.stdout)")
        // A kc keychain: its password is kept in the default keychain, and kc reads it with it.
        out = try home.sh(
            "kc find -s kc-secret-service -a awsvault -w | kc unlock -k awsvault --password-stdin && kc find -k awsvault -s aws-vault -a dev -w",
            password: nil)
        #expect(out.status == 0 && out.stdout == "AKIA-secret", "\(out.stderr)")
        var st = stat()
        #expect(stat(home.directory + "/data/kc/awsvault.keychain-db", &st) == 0 && st.st_mode & 0o777 == 0o600)
        // Everything locked: unlocking the collection waits for the default keychain only.
        #expect(try home.kc(["lock", "--all"]).status == 0)
        let waiting = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import secretstorage
                c = secretstorage.dbus_init()
                col = secretstorage.Collection(c, '/org/freedesktop/secrets/collection/awsvault')
                print(col.is_locked(), col.unlock(), col.is_locked())
                print(list(col.search_items({'username': 'dev'}))[0].get_secret())
                """
            ], environment: bus.environment, timeout: 30)
        usleep(700_000)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        out = try waiting.finish()
        #expect(out.status == 0 && out.stdout == "True False False\nb'AKIA-secret'\n", "\(out.stdout)\(out.stderr)")
    }

    /// With the default keychain locked, CreateCollection returns a prompt that completes
    /// with the new collection's path (`o`) once `kc unlock` runs, and as dismissed with
    /// "/" when nobody does.
    @Test func createCollectionWhileLockedPrompts() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 3)
        #expect(try home.kc(["lock"]).status == 0)
        var out = try bus.python(
            """
            import secretstorage
            from secretstorage.exceptions import PromptDismissedException
            c = secretstorage.dbus_init()
            try:
                secretstorage.create_collection(c, 'nobody')
                print('created')
            except PromptDismissedException:
                print('dismissed')
            """)
        #expect(out.status == 0 && out.stdout == "dismissed\n", "\(out.stdout)\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.directory + "/data/kc/nobody.keychain-db"))
        let waiting = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import secretstorage
                c = secretstorage.dbus_init()
                print(secretstorage.create_collection(c, 'team-x').collection_path)
                """
            ], environment: bus.environment, timeout: 30)
        usleep(700_000)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        out = try waiting.finish()
        #expect(out.status == 0 && out.stdout == "/org/freedesktop/secrets/collection/team_2dx\n", "\(out.stdout)\(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.directory + "/data/kc/team-x.keychain-db"))
    }
}
