import Foundation
import Testing
import KCTestSupport

/// What the Secret Service specification lets a client do that kc's own model does not
/// have as such (docs/secret-service.md, "Items with the same attributes" and "A
/// collection's label can be set"), through Debian's secretstorage and jeepney, and what
/// `kc` then shows.
@Suite struct SpecificationModelTests {
    /// Two CreateItem calls without `replace` on the same attributes make two items, each
    /// with its own secret and content type; kc finds the first and lists both; `replace`
    /// replaces the one whose attributes are exactly those given (the second: the first is
    /// a plain kc item); `kc:copy` is never shown and cannot be given.
    @Test func itemsWithTheSameAttributesStayApart() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            import secretstorage
            from jeepney.wrappers import DBusErrorResponse
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            same = {'service': 'example.org', 'username': 'alice'}
            first = col.create_item('first', same, b'one')
            second = col.create_item('second', same, b'', content_type='data/null')
            print('two', first.item_path != second.item_path, len(list(col.search_items(same))))
            print('attrs', second.get_attributes() == same, first.get_attributes().get('kc:copy'))
            print('secrets', first.get_secret(), first.get_secret_content_type(), second.get_secret(), second.get_secret_content_type())
            other = col.create_item('other', {'application': 'app'}, b'x')
            other.set_attributes(same)
            print('moved', other.get_attributes() == same, len(list(col.search_items(same))))
            other.delete()
            try:
                col.create_item('bad', {'kc:copy': 'x'}, b'x')
            except DBusErrorResponse as e:
                print('refused', e.name)
            import subprocess
            print('kc', subprocess.run(['\(bus.kcPath)', 'find', '-s', 'example.org', '-a', 'alice', '-w'], capture_output=True).stdout)
            replaced = col.create_item('again', same, b'three', replace=True, content_type='application/x-test')
            print('replaced', replaced == second, second.get_secret(), second.get_secret_content_type(), first.get_secret())
            first.delete()
            print('left', [i.get_label() for i in col.search_items(same)], second.get_secret_content_type())
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("two True 2\n"), "\(out.stdout)")
        #expect(out.stdout.contains("attrs True None\n"), "the copy's pair is hidden: \(out.stdout)")
        #expect(out.stdout.contains("secrets b'one' text/plain b'' data/null\n"), "\(out.stdout)")
        #expect(out.stdout.contains("moved True 3\n"), "\(out.stdout)")
        #expect(out.stdout.contains("refused org.freedesktop.DBus.Error.InvalidArgs\n"), "\(out.stdout)")
        #expect(out.stdout.contains("kc b'one'\n"), "kc finds the first stored: \(out.stdout)")
        #expect(out.stdout.contains("replaced True b'three' application/x-test b'one'\n"), "\(out.stdout)")
        #expect(out.stdout.contains("left ['again'] application/x-test\n"), "\(out.stdout)")
        // kc's own view: the first was a plain item; the one left is the copy, whose map
        // has the hidden pair.
        let all = try home.kc(["find", "-s", "example.org", "-a", "alice", "--all", "--json"])
        #expect(all.status == 0, "\(all.stderr)")
        let items = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(items.count == 1, "\(all.stdout)")
        let map = (items.first?["attributes"] as? [String: Any])?["secret-service-attributes"] as? [String: String] ?? [:]
        #expect(map["service"] == "example.org" && map["username"] == "alice" && map["kc:copy"]?.count == 32, "\(all.stdout)")
    }

    /// Once a second item has the attributes of a plain one, `replace` and a lookup meet
    /// the same item: secret-tool's store (replace) then lookup gives what was just stored,
    /// never the other item's older secret.
    @Test func aReplaceHitsTheItemALookupReturns() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        let store = ["secret-tool", "store", "--label", "x", "service", "s", "username", "u"]
        var out = try bus.run(store, stdin: "s3cret1")
        #expect(out.status == 0, "\(out.stderr)")
        out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            col.create_item('second', {'service': 's', 'username': 'u'}, b's3cret2', replace=False)
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        out = try bus.run(store, stdin: "NEWVALUE")
        #expect(out.status == 0, "\(out.stderr)")
        out = try bus.run(["secret-tool", "lookup", "service", "s", "username", "u"])
        #expect(out.status == 0 && out.stdout == "NEWVALUE", "the lookup returns what the replace stored: \(out.stdout)\(out.stderr)")
        out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            same = {'service': 's', 'username': 'u'}
            hit = col.create_item('fourth', same, b'v4', replace=True)
            found = list(col.search_items(same))
            print('first', found[0].item_path == hit.item_path, len(found), found[0].get_secret(), found[1].get_secret())
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("first True 2 b'v4' b's3cret1'\n"), "\(out.stdout)")
    }

    /// `replace` with `{service, account}` replaces the item made with exactly those, not an
    /// older one another client made with `{service, username}` (a plain kc item answers to
    /// both names): that client's secret stays.
    @Test func aReplaceNeverTouchesAnItemOfOtherAttributes() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            a = col.create_item('A', {'service': 't', 'username': 'u'}, b'A-SECRET', replace=False)
            b = col.create_item('B', {'service': 't', 'account': 'u'}, b'B-v1', replace=False)
            b2 = col.create_item('B', {'service': 't', 'account': 'u'}, b'B-v2', replace=True)
            print('paths', b2.item_path == b.item_path, b2.item_path != a.item_path)
            print('secrets', a.get_secret(), b.get_secret())
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("paths True True\n"), "\(out.stdout)")
        #expect(out.stdout.contains("secrets b'A-SECRET' b'B-v2'\n"), "\(out.stdout)")
        // kc's own item (service/account, no map) is A's.
        let found = try home.kc(["find", "-s", "t", "-a", "u", "-w"])
        #expect(found.stdout == "A-SECRET", "\(found.stdout)\(found.stderr)")
    }

    /// An older D-Bus item whose attributes are set to those of the user's own `kc add`
    /// item becomes a copy (`kc:copy`) with an older row: `kc find -w` and `kc run` still
    /// give the user's own item, with the warning that two match, never the copy in silence.
    @Test func aCopyNeverTakesPrecedenceInKcFindOrRun() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        var out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            col.create_item('dbus', {'application': 'app'}, b'DBUS-SECRET')
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(try home.kc(["add", "-s", "svc2", "-a", "bob", "-w", "KC-SECRET"]).status == 0)
        out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            [item] = col.search_items({'application': 'app'})
            item.set_attributes({'service': 'svc2', 'username': 'bob'})
            print('moved', len(list(col.search_items({'service': 'svc2', 'username': 'bob'}))))
            """)
        #expect(out.status == 0 && out.stdout.contains("moved 2\n"), "\(out.stdout)\(out.stderr)")
        out = try home.kc(["find", "-s", "svc2", "-a", "bob", "-w"])
        #expect(out.status == 0 && out.stdout == "KC-SECRET", "\(out.stdout)\(out.stderr)")
        #expect(out.stderr.contains("more than one item matches"), "\(out.stderr)")
        out = try home.kc(["run", "--no-masking", "--env", "X=kc://svc2/bob", "--", "/bin/sh", "-c", "printf %s \"$X\""])
        #expect(out.status == 0 && out.stdout == "KC-SECRET", "\(out.stdout)\(out.stderr)")
        #expect(
            out.stderr.contains("kc: warning: more than one item matches X (kc://svc2/bob); used the secret of the first\n")
                && out.stderr.contains("kc find -s svc2 -a bob --all"), "\(out.stderr)")
    }

    /// A label set on the default collection before a keychain of that name existed does
    /// not redirect CreateCollection with that name away from the keychain (the name
    /// wins); a label that is another keychain's name is refused.
    @Test func aLabelNeverShadowsAnotherKeychainsName() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        var out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            secretstorage.get_default_collection(c).set_label('work')
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        let made = try home.kc(["create", "-k", "work", "--kdf", "interactive"], password: KCHome.password)
        #expect(made.status == 0, "\(made.stderr)")
        out = try bus.python(
            """
            import secretstorage
            from jeepney.wrappers import DBusErrorResponse
            c = secretstorage.dbus_init()
            print('made', secretstorage.create_collection(c, 'work').collection_path)
            for label in ['work', 'Work', 'work ', 'wo\\u200brk']:
                try:
                    secretstorage.get_default_collection(c).set_label(label)
                except DBusErrorResponse as e:
                    print('refused', e.name)
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("made /org/freedesktop/secrets/collection/work\n"), "\(out.stdout)")
        #expect(out.stdout.components(separatedBy: "refused org.freedesktop.DBus.Error.InvalidArgs\n").count == 5, "\(out.stdout)")
    }

    /// A collection's Label is read-write: set through the default alias, it is what every
    /// client reads (after the provider restarts too), CreateCollection with it returns
    /// that collection, and setting the keychain's name again removes the file kept.
    @Test func aCollectionsLabelCanBeSet() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let labelFile = home.directory + "/data/kc/collection-labels/login"
        var out = try bus.python(
            """
            import secretstorage
            from jeepney.wrappers import DBusErrorResponse
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            print('before', col.get_label())
            col.set_label('Mots de passe – perso')
            print('after', secretstorage.Collection(c, '/org/freedesktop/secrets/collection/login').get_label())
            try:
                col.set_label('x' * 4097)
            except DBusErrorResponse as e:
                print('long', e.name, col.get_label() == 'Mots de passe – perso')
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("before login\nafter Mots de passe – perso\n"), "\(out.stdout)")
        #expect(out.stdout.contains("long org.freedesktop.DBus.Error.InvalidArgs True\n"), "\(out.stdout)")
        var st = stat()
        #expect(stat(labelFile, &st) == 0 && st.st_mode & 0o777 == 0o600, "\(labelFile)")

        // A new provider reads it again; CreateCollection with the label finds the keychain.
        guard let pid = try bus.providerPID() else {
            Issue.record("no provider owns the name")
            return
        }
        #expect(kill(pid, SIGKILL) == 0)
        usleep(200_000)
        out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            print('restarted', secretstorage.get_default_collection(c).get_label())
            made = secretstorage.create_collection(c, 'Mots de passe – perso')
            print('same', made.collection_path)
            made.set_label('login')
            print('back', made.get_label())
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("restarted Mots de passe – perso\n"), "\(out.stdout)")
        #expect(out.stdout.contains("same /org/freedesktop/secrets/collection/login\n"), "\(out.stdout)")
        #expect(out.stdout.contains("back login\n"), "\(out.stdout)")
        #expect(!FileManager.default.fileExists(atPath: labelFile), "setting the name again removes the file")
    }

    /// The label folder is used only as kc uses its keychain folders: a folder others may
    /// write to, or a link to another folder, is not read (the keychain's name is the
    /// label) and setting a label there fails with a message naming it.
    @Test func aLabelFolderThatIsALinkOrLooseIsIgnored() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let folder = home.directory + "/data/kc/collection-labels"
        let read = """
            import secretstorage
            from jeepney.wrappers import DBusErrorResponse
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            print('label', col.get_label())
            try:
                col.set_label('again')
                print('set', col.get_label())
            except DBusErrorResponse as e:
                print('refused', e.name, e.data)
            """
        var out = try bus.python(
            """
            import secretstorage
            secretstorage.get_default_collection(secretstorage.dbus_init()).set_label('mine')
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        // Loose: group and others may write.
        #expect(chmod(folder, 0o777) == 0)
        out = try bus.python(read)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("label login\n"), "\(out.stdout)")
        #expect(out.stdout.contains("refused org.freedesktop.DBus.Error.Failed") && out.stdout.contains("chmod 700"), "\(out.stdout)")
        #expect(chmod(folder, 0o700) == 0)
        out = try bus.python(read)
        #expect(out.stdout.contains("label mine\nset again\n"), "\(out.stdout)\(out.stderr)")
        // A link to another folder (with a label file of its own) is not followed.
        let elsewhere = home.directory + "/elsewhere"
        try FileManager.default.moveItem(atPath: folder, toPath: elsewhere)
        #expect(symlink(elsewhere, folder) == 0)
        out = try bus.python(read)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("label login\n"), "\(out.stdout)")
        #expect(out.stdout.contains("refused org.freedesktop.DBus.Error.Failed") && out.stdout.contains("a link is not followed"), "\(out.stdout)")
    }
}
