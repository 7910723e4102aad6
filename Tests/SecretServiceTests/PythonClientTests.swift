import Foundation
import Testing
import KCTestSupport

/// Python's secretstorage (the encrypted session by default) and keyring's SecretService
/// backend (pip, twine, Poetry) against kc's provider.
@Suite struct PythonClientTests {
    /// secretstorage negotiates dh-ietf1024-sha256-aes128-cbc-pkcs7: store, search, read,
    /// change and delete, with binary secrets and content types.
    @Test func secretstorageOverTheEncryptedSession() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            import secretstorage
            from secretstorage.dhcrypto import Session
            c = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(c)
            print('label', col.get_label(), 'locked', col.is_locked())
            item = col.create_item('App token', {'application': 'myapp', 'user': 'bob'}, b'\\x00tok\\nen\\xff',
                                   replace=True, content_type='application/octet-stream')
            found = list(col.search_items({'application': 'myapp'}))
            print('found', len(found), found[0].get_attributes() == {'application': 'myapp', 'user': 'bob'})
            print('secret', found[0].get_secret().hex(), found[0].get_secret_content_type())
            print('encrypted', found[0].session.encrypted)
            found[0].set_secret(b'second')
            print('changed', found[0].get_secret())
            found[0].set_label('Renamed')
            found[0].set_attributes({'application': 'myapp', 'user': 'carol'})
            print('attrs', sorted(list(col.search_items({'user': 'carol'}))[0].get_attributes().items()))
            print('old', len(list(col.search_items({'user': 'bob'}))))
            found[0].delete()
            print('after', len(list(col.search_items({'application': 'myapp'}))))
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("label login locked False"), "\(out.stdout)")
        #expect(out.stdout.contains("found 1 True"), "\(out.stdout)")
        #expect(out.stdout.contains("secret 00746f6b0a656eff application/octet-stream"), "\(out.stdout)")
        #expect(out.stdout.contains("encrypted True"), "the DH session was negotiated: \(out.stdout)")
        #expect(out.stdout.contains("changed b'second'"), "\(out.stdout)")
        #expect(out.stdout.contains("attrs [('application', 'myapp'), ('user', 'carol')]") && out.stdout.contains("old 0"), "\(out.stdout)")
        #expect(out.stdout.contains("after 0"), "\(out.stdout)")
        // kc saw the account follow `user`.
        #expect(try home.kc(["find", "-a", "carol"]).status == 44, "deleted")
    }

    /// Degenerate Diffie-Hellman public values (0, 1, p − 1, p, too long) and unknown
    /// algorithms are refused with an error, and the provider goes on serving.
    @Test func theEncryptedSessionRefusesDegenerateKeys() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            svc = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            c = open_dbus_connection('SESSION')
            p = int('FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF', 16)
            for bad in [b'', b'\\x00', b'\\x01', (p - 1).to_bytes(128, 'big'), p.to_bytes(128, 'big'), b'\\xff' * 129]:
                r = c.send_and_get_reply(new_method_call(svc, 'OpenSession', 'sv', ('dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', bad))))
                print(r.header.message_type.name, r.header.fields.get(4, ''))
            r = c.send_and_get_reply(new_method_call(svc, 'OpenSession', 'sv', ('rsa-9000', ('s', ''))))
            print(r.header.message_type.name, r.header.fields.get(4, ''))
            """)
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n")
        #expect(lines.count == 7, "\(out.stdout)")
        #expect(lines.prefix(6).allSatisfy { $0 == "error org.freedesktop.DBus.Error.InvalidArgs" }, "\(out.stdout)")
        #expect(lines.last == "error org.freedesktop.DBus.Error.NotSupported", "\(out.stdout)")
    }

    /// keyring's SecretService backend (what pip and twine use), and the two worlds meeting:
    /// `kc find -s SERVICE -a USER` finds what keyring stored, keyring finds kc's items.
    @Test func keyringBackend() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        var out = try bus.python(
            """
            import keyring
            from keyring.backends import SecretService
            kr = SecretService.Keyring()
            kr.set_password('https://upload.pypi.org/legacy/', '__token__', 'pypi-AgEN')
            print(kr.get_password('https://upload.pypi.org/legacy/', '__token__'))
            kr.set_password('https://upload.pypi.org/legacy/', '__token__', 'pypi-second')
            print(kr.get_password('https://upload.pypi.org/legacy/', '__token__'))
            """)
        #expect(out.status == 0 && out.stdout == "pypi-AgEN\npypi-second\n", "\(out.stdout)\(out.stderr)")
        out = try home.kc(["find", "-s", "https://upload.pypi.org/legacy/", "-a", "__token__", "-w"])
        #expect(out.status == 0 && out.stdout == "pypi-second" && out.stderr.isEmpty, "one item: \(out.stderr)")
        #expect(try home.kc(["add", "-s", "ci-service", "-a", "robot", "-w", "from-kc"]).status == 0)
        out = try bus.python(
            """
            from keyring.backends import SecretService
            kr = SecretService.Keyring()
            print(kr.get_password('ci-service', 'robot'))
            kr.delete_password('https://upload.pypi.org/legacy/', '__token__')
            print(kr.get_password('https://upload.pypi.org/legacy/', '__token__'))
            """)
        #expect(out.status == 0 && out.stdout == "from-kc\nNone\n", "\(out.stdout)\(out.stderr)")
    }
}
