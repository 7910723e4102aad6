import Foundation
import Testing
import KCTestSupport

/// The provider under attack and failure: another uid, garbage arguments, kill -9, a bus
/// where there is none.
@Suite struct ProviderRobustnessTests {
    /// Calls from another uid are refused (the bus here lets any user connect).
    @Test func anotherUidIsRefused() throws {
        guard getuid() == 0 else { return }   // only root can act as another user here
        let home = try KCHome(base: OtherUser.base)
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let bus = try PrivateBus(home, anyUser: true)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "mine").status == 0)
        var env = bus.environment
        env["HOME"] = "/tmp"
        let out = try Spawn.run(
            [
                "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                "/usr/bin/secret-tool", "lookup", "service", "s", "username", "u"
            ], environment: env, timeout: 20)
        #expect(out.status != 0 && !out.stdout.contains("mine"), "\(out.stdout)")
        #expect(out.stderr.contains("AccessDenied") || out.stderr.contains("answers only its own user"), "\(out.stderr)")
        #expect(try bus.run(["secret-tool", "lookup", "service", "s", "username", "u"]).stdout == "mine", "still serving its user")
    }

    /// Garbage from a client: wrong signatures, wrong types, unknown objects and methods,
    /// sessions that are not the caller's, malformed secrets. Each gets an error; the
    /// provider keeps serving.
    @Test func garbageGetsErrorsAndTheProviderKeepsServing() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            import random
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            def call(path, iface, member, sig, body):
                a = DBusAddress(path, bus_name='org.freedesktop.secrets', interface=iface)
                r = c.send_and_get_reply(new_method_call(a, member, sig, body), timeout=5)
                return r.header.message_type.name
            S = '/org/freedesktop/secrets'
            svc = 'org.freedesktop.Secret.Service'
            kinds = set()
            cases = [
                (S, svc, 'OpenSession', 'ss', ('plain', 'x')),
                (S, svc, 'OpenSession', 'sv', ('plain', ('ay', b'x' * 100000))),
                (S, svc, 'SearchItems', 's', ('x',)),
                (S, svc, 'SearchItems', 'a{sv}', ({'a': ('s', 'b')},)),
                (S, svc, 'GetSecrets', 'aoo', (['/x'], '/org/freedesktop/secrets/session/999')),
                (S, svc, 'Unlock', 'ao', (['/org/freedesktop/secrets/collection/nope'],)),
                (S, svc, 'NoSuchMethod', '', ()),
                (S + '/collection/login/zz', 'org.freedesktop.Secret.Item', 'GetSecret', 'o', ('/',)),
                (S + '/collection/login/00', 'org.freedesktop.Secret.Item', 'GetSecret', 'o', ('/org/freedesktop/secrets/session/1',)),
                (S + '/collection/login', 'org.freedesktop.Secret.Collection', 'CreateItem', 'a{sv}(oayays)b',
                    ({}, ('/org/freedesktop/secrets/session/424242', b'', b'x', 'text/plain'), True)),
                (S + '/nothing/here', 'org.freedesktop.DBus.Properties', 'GetAll', 's', ('x',)),
                (S + '/collection/login', 'org.freedesktop.DBus.Properties', 'Set', 'ssv', ('org.freedesktop.Secret.Collection', 'Label', ('u', 7))),
                (S + '/prompt/77', 'org.freedesktop.Secret.Prompt', 'Prompt', 's', ('',)),
            ]
            for case in cases:
                kinds.add(call(*case))
            # A DH session, then a secret with a bad IV and one with bad padding.
            import os
            sess = DBusAddress(S, bus_name='org.freedesktop.secrets', interface=svc)
            r = c.send_and_get_reply(new_method_call(sess, 'OpenSession', 'sv', ('dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', (2).to_bytes(128, 'big')))))
            spath = r.body[1]
            kinds.add(call(S + '/collection/login', 'org.freedesktop.Secret.Collection', 'CreateItem', 'a{sv}(oayays)b',
                           ({}, (spath, b'short', b'0' * 16, 'text/plain'), True)))
            kinds.add(call(S + '/collection/login', 'org.freedesktop.Secret.Collection', 'CreateItem', 'a{sv}(oayays)b',
                           ({}, (spath, os.urandom(16), os.urandom(31), 'text/plain'), True)))
            rnd = random.Random(7)
            for i in range(300):
                member = rnd.choice(['OpenSession', 'SearchItems', 'Unlock', 'Lock', 'GetSecrets', 'ReadAlias', 'SetAlias', 'CreateCollection'])
                sig, body = rnd.choice([('s', (os.urandom(8).hex(),)), ('ao', (['/a/b'],)), ('a{ss}', ({'k': 'v' * rnd.randrange(50)},)),
                                        ('i', (rnd.randrange(1000),)), ('', ()), ('ay', (os.urandom(rnd.randrange(300)),))])
                kinds.add(call(S, svc, member, sig, body))
            print(sorted(kinds))
            print(call(S, 'org.freedesktop.DBus.Properties', 'Get', 'ss', (svc, 'Collections')))
            """, timeout: 60)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.hasPrefix("['error'"), "every garbage call is an error reply: \(out.stdout)")
        #expect(out.stdout.hasSuffix("method_return\n"), "still serving: \(out.stdout)")
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "ok").status == 0)
    }

    /// Introspect of a path that names no object advertises no Properties interface
    /// (its GetAll answers NoSuchObject); the service's own path does.
    @Test func introspectionOfNothingAdvertisesNoProperties() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        let out = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            def xml(path):
                a = DBusAddress(path, bus_name='org.freedesktop.secrets', interface='org.freedesktop.DBus.Introspectable')
                return c.send_and_get_reply(new_method_call(a, 'Introspect')).body[0]
            none = '/org/freedesktop/secrets/nothing'
            print('nothing', 'org.freedesktop.DBus.Properties' in xml(none))
            print('service', 'org.freedesktop.DBus.Properties' in xml('/org/freedesktop/secrets'))
            p = DBusAddress(none, bus_name='org.freedesktop.secrets', interface='org.freedesktop.DBus.Properties')
            r = c.send_and_get_reply(new_method_call(p, 'GetAll', 's', ('',)))
            from jeepney.low_level import HeaderFields
            print('getall', r.header.fields.get(HeaderFields.error_name))
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout == "nothing False\nservice True\ngetall org.freedesktop.Secret.Error.NoSuchObject\n", "\(out.stdout)")
    }

    /// Killed with -9, the provider is started again by the next client call (D-Bus
    /// activation), with nothing lost: it holds nothing but the bus connection.
    @Test func killedProviderIsStartedAgainByTheNextCall() throws {
        let (_, bus) = try SecretToolTests.unlocked()
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "kept").status == 0)
        guard let pid = try bus.providerPID() else {
            Issue.record("no provider owns the name")
            return
        }
        #expect(kill(pid, SIGKILL) == 0)
        usleep(200_000)
        let out = try bus.run(["secret-tool", "lookup", "service", "s", "username", "u"])
        #expect(out.status == 0 && out.stdout == "kept", "\(out.stderr)")
        let again = try bus.providerPID()
        #expect(again != nil && again != pid)
    }

    /// `kc secret-service --start` where there is no bus, as the README shows it: a private
    /// dbus-daemon, the provider on it, and shell lines that point clients there; a second
    /// `--start` finds it running.
    @Test func startWhereThereIsNoBusAsTheReadmeShows() throws {
        let home = try KCHome()
        try home.createKeychain()
        let readme = try String(contentsOfFile: PrivateBus.packageRoot + "/README.md", encoding: .utf8)
        guard let marker = readme.range(of: "<!-- example: secret-service -->\n```sh\n"),
            let end = readme.range(of: "```", range: marker.upperBound..<readme.endIndex)
        else {
            Issue.record("no secret-service example in the README")
            return
        }
        let script = String(readme[marker.upperBound..<end.lowerBound])
        let out = try home.sh(
            """
            unset DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR
            export TOKEN=ghp-from-readme
            set -e
            \(script)
            echo
            [ -n "$DBUS_SESSION_BUS_PID" ]
            eval "$(kc secret-service --start)"
            kill "$DBUS_SESSION_BUS_PID"
            """)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout == "ghp-from-readmeghp-from-readme\n", "\(out.stdout)")
        #expect(out.stderr.contains("started a private D-Bus daemon") && out.stderr.contains("already serves"), "\(out.stderr)")
    }

    /// Another provider owns the name: kc refuses and names it.
    @Test func anotherOwnerIsNamed() throws {
        let home = try KCHome()
        let bus = try PrivateBus(home)
        let squatter = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import time
                from jeepney.io.blocking import open_dbus_connection
                from jeepney.bus_messages import message_bus
                c = open_dbus_connection('SESSION')
                c.send_and_get_reply(message_bus.RequestName('org.freedesktop.secrets'))
                print('owned', flush=True)
                time.sleep(30)
                """
            ], environment: bus.environment, timeout: 40)
        var owned = false
        for _ in 0..<100 where !owned {
            owned = (try? bus.providerPID()) != nil
            if !owned { usleep(50_000) }
        }
        #expect(owned)
        let out = try bus.run([PrivateBus.providerPath], timeout: 20)
        #expect(out.status == 1 && out.stderr.contains("is already owned by python3"), "\(out.stderr)")
        _ = squatter
    }

    /// `--replace` takes the name from an owner that allows replacement (as kc itself does).
    @Test func replaceTakesTheNameOver() throws {
        let home = try KCHome()
        let bus = try PrivateBus(home)
        let other = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import time
                from jeepney.io.blocking import open_dbus_connection
                from jeepney.bus_messages import message_bus
                c = open_dbus_connection('SESSION')
                c.send_and_get_reply(message_bus.RequestName('org.freedesktop.secrets', 1))
                time.sleep(30)
                """
            ], environment: bus.environment, timeout: 40)
        var first: Int32?
        for _ in 0..<100 where first == nil {
            first = try? bus.providerPID()
            if first == nil { usleep(50_000) }
        }
        #expect(first == other.pid, "the other program owned the name first")
        let provider = try Spawn.start([PrivateBus.providerPath, "--replace", "--no-pinentry"], environment: bus.environment, timeout: 40)
        var taken = false
        for _ in 0..<100 where !taken {
            taken = (try? bus.providerPID()) == provider.pid
            if !taken { usleep(50_000) }
        }
        #expect(taken, "kc's provider owns the name after --replace")
    }
}

/// The provider stays out of kc's start-up: kc links neither libsystemd nor libcrypto.
@Suite struct ClientLinkTests {
    @Test func kcLinksNoDBusAndNoOpenSSL() throws {
        let out = try Spawn.run(["/usr/bin/readelf", "-d", KCBinary.path], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
        #expect(out.status == 0, "\(out.stderr)")
        let needed = out.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty || out.stdout.contains("no dynamic section"), "\(out.stdout)")
        #expect(
            !needed.contains { $0.contains("libsystemd") || $0.contains("libdbus") || $0.contains("libcrypto") || $0.contains("libssl") },
            "\(needed)")
        let provider = try Spawn.run(["/usr/bin/readelf", "-d", PrivateBus.providerPath], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
        #expect(provider.stdout.contains("libsystemd"), "the check can fail: the provider does link it")
    }
}
