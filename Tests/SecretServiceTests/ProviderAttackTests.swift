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
        let out = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            S = '/org/freedesktop/secrets'
            svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            session = c.send_and_get_reply(new_method_call(svc, 'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
            col = DBusAddress(S + '/collection/login', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Collection')
            for replace in (False, True):
                r = c.send_and_get_reply(new_method_call(col, 'CreateItem', 'a{sv}(oayays)b',
                                         ({}, (session, b'', b'\(secret)', 'text/plain'), replace)))
                print(r.header.message_type.name, r.body)
            """)
        #expect(out.status == 0, "\(out.stderr)")
        let answers = out.stdout.split(separator: "\n")
        // Without `replace` the first request holds the secret: the program check refuses it.
        #expect(answers.first?.hasPrefix("error") == true && answers.first?.contains("runs another program than this kc") == true, "\(out.stdout)")
        // With `replace` a search for the item to replace comes first (no secret in it), and
        // the impostor's answer to it ends the call before the secret would be sent.
        #expect(answers.count == 2 && answers[1].hasPrefix("error"), "\(out.stdout)")
        let frames = AgentImpostor.received(log)
        #expect(!frames.isEmpty, "the provider asked it something: \(frames)")
        let hex = Array(secret.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(!frames.contains { $0.contains(hex) }, "the impostor received the secret: \(frames)")
    }

    /// The environment of a client of uid 65534 on `bus`.
    static func nobody(_ bus: PrivateBus) -> [String: String] {
        var env = bus.environment
        env["HOME"] = "/tmp"
        return env
    }

    /// On a bus that lets other users connect, another user asked for
    /// org.freedesktop.secrets with REPLACE_EXISTING: kc allowed replacement, so it got
    /// the name (the provider quit), and this user's clients then sent it their secrets.
    /// kc no longer lets its name be taken.
    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
    func anotherUserCannotTakeTheNameOver() throws {
        let home = try KCHome(base: OtherUser.base)
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let bus = try PrivateBus(home, anyUser: true)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "mine").status == 0)
        let provider = try bus.providerPID()
        let out = try Spawn.run(
            [
                "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                """
                from jeepney.io.blocking import open_dbus_connection
                from jeepney.bus_messages import message_bus
                c = open_dbus_connection('SESSION')
                # DBUS_NAME_FLAG_REPLACE_EXISTING | DBUS_NAME_FLAG_DO_NOT_QUEUE
                print(c.send_and_get_reply(message_bus.RequestName('org.freedesktop.secrets', 6)).body[0])
                """
            ], environment: Self.nobody(bus), timeout: 20)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "3\n", "EXISTS, not PRIMARY_OWNER (1): \(out.stdout)")
        let owner = try bus.providerPID()
        #expect(provider != nil && owner == provider, "kc's provider still owns the name")
        #expect(try bus.run(["secret-tool", "lookup", "service", "s", "username", "u"]).stdout == "mine")
    }

    /// `kc secret-service --start` took any owner whose process is called kc-secret-service
    /// for kc's provider: another user's process, given that name, got "already serves"
    /// and the shell lines pointing this user's clients at it. The owner's uid is checked.
    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
    func startDoesNotTakeAnotherUsersProcessForKc() throws {
        let home = try KCHome(base: OtherUser.base)
        try home.createKeychain()
        let bus = try PrivateBus(home, anyUser: true)
        let squatter = try Spawn.start(
            [
                "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                """
                import ctypes, time
                from jeepney.io.blocking import open_dbus_connection
                from jeepney.bus_messages import message_bus
                ctypes.CDLL(None).prctl(15, b'kc-secret-service', 0, 0, 0)   # PR_SET_NAME
                c = open_dbus_connection('SESSION')
                c.send_and_get_reply(message_bus.RequestName('org.freedesktop.secrets', 4))
                time.sleep(20)
                """
            ], environment: Self.nobody(bus), timeout: 40)
        defer { kill(squatter.pid, SIGKILL); _ = try? squatter.finish() }
        var owned = false
        for _ in 0..<100 where !owned {
            owned = (try? bus.providerPID()) != nil
            if !owned { usleep(50_000) }
        }
        #expect(owned)
        let out = try home.kc(["secret-service", "--start"], extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(out.status == 1 && out.stdout.isEmpty, "\(out.stdout)\(out.stderr)")
        #expect(out.stderr.contains("kc-secret-servi (pid") && out.stderr.contains("uid 65534"), "\(out.stderr)")
    }

    /// As a normal user (no CAP_SYS_PTRACE, so the non-dumpable agent's program is hidden),
    /// the provider cannot establish an agent it did not start, and refused to send it a new
    /// collection's password: CreateCollection failed for every normal user (and once left a
    /// keychain nobody could open). Now the agent makes the keychain and keeps its password
    /// itself (`unlockWithKept`); no password crosses the socket, so nothing needs
    /// establishing, and a second CreateCollection of the label returns the same collection.
    @Test(.enabled(if: geteuid() == 0, "needs root to run the bus as another user"))
    func createCollectionWorksForANormalUser() throws {
        let home = try KCHome(base: OtherUser.base)
        #expect(chown(home.directory, 65534, 65534) == 0)
        let bus = try PrivateBus(home, asNobody: true)
        defer { _ = try? bus.kc(["agent", "--stop"]) }
        #expect(try bus.kc(["create", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try bus.kc(["unlock"], password: KCHome.password).status == 0)
        var out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            for attempt in range(2):
                col = secretstorage.create_collection(c, 'awsvault')
                print('made', col.collection_path, 'locked' if col.is_locked() else 'unlocked')
            col.create_item('aws', {'service': 'aws', 'username': 'dev'}, b'AKIA')
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(
            out.stdout == "made /org/freedesktop/secrets/collection/awsvault unlocked\n"
                + "made /org/freedesktop/secrets/collection/awsvault unlocked\n", "\(out.stdout)")
        #expect(FileManager.default.fileExists(atPath: home.directory + "/data/kc/awsvault.keychain-db"))
        #expect(try bus.kc(["find", "-k", "awsvault", "-s", "aws", "-a", "dev", "-w"]).stdout == "AKIA")
        // Locked, then unlocked from the default keychain's kept password, as a normal user.
        #expect(try bus.kc(["lock", "-k", "awsvault"]).status == 0)
        out = try bus.python(
            """
            import secretstorage
            c = secretstorage.dbus_init()
            col = secretstorage.Collection(c, '/org/freedesktop/secrets/collection/awsvault')
            print(col.unlock(), col.is_locked())
            """)
        #expect(out.status == 0 && out.stdout == "False False\n", "\(out.stdout)\(out.stderr)")
        // The default collection serves on.
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "v").status == 0)
        out = try bus.kc(["find", "-s", "s", "-a", "u", "-w"])
        #expect(out.status == 0 && out.stdout == "v", "\(out.stderr)")
    }

    /// The resident memory of process `pid` in KiB (VmRSS).
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// A search in a locked keychain is kept (its placeholder is resolved once the keychain
    /// is unlocked), up to 256 of them, whatever their size: one client made the provider
    /// hold 450 MB with twenty 20 MB searches. A search the keychain could never answer (a
    /// value over 64 KiB, more than 64 attributes) is now refused as it is when unlocked,
    /// and the kept searches share a budget of 1 MiB, the oldest forgotten first.
    @Test func lockedSearchesCannotMakeTheProviderHoldMemory() throws {
        let (home, bus) = try SecretToolTests.unlocked()
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "v").status == 0)
        #expect(try home.kc(["lock"]).status == 0)
        guard let pid = try bus.providerPID() else {
            Issue.record("no provider owns the name")
            return
        }
        let out = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            S = '/org/freedesktop/secrets'
            svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            def search(attributes):
                r = c.send_and_get_reply(new_method_call(svc, 'SearchItems', 'a{ss}', (attributes,)), timeout=30)
                return r.body[0] if r.header.message_type.name == 'error' else r.body[1]
            print('huge', search({'k': 'x' * (65536 + 1)}))
            print('many', search({'k%d' % i: 'v' for i in range(65)}))
            first = search({'service': 's'})
            print('small', len(first))
            for i in range(40):
                search({'k%02d' % k: '%d' % i + 'x' * 50000 for k in range(64)})
            props = DBusAddress(first[0], bus_name='org.freedesktop.secrets', interface='org.freedesktop.DBus.Properties')
            r = c.send_and_get_reply(new_method_call(props, 'Get', 'ss', ('org.freedesktop.Secret.Item', 'Attributes')))
            print('first', r.header.message_type.name)
            """, timeout: 120)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("huge ") && out.stdout.contains("at most 65536"), "\(out.stdout)")
        #expect(out.stdout.contains("many ") && out.stdout.contains("at most 64"), "\(out.stdout)")
        #expect(out.stdout.contains("small 1\n"), "one placeholder: \(out.stdout)")
        #expect(out.stdout.contains("first error"), "the oldest placeholder was forgotten: \(out.stdout)")
        let resident = Self.residentKiB(pid)
        #expect(resident > 0 && resident < 64 << 10, "the provider holds \(resident) KiB")
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try bus.run(["secret-tool", "lookup", "service", "s", "username", "u"]).stdout == "v")
    }

    /// Sessions and prompts lived as long as their client's connection, without limit: a
    /// client that opens sessions in a loop, or calls Unlock and never Prompt, made the
    /// provider grow for as long as it stayed. A client now has at most 1024 sessions (its
    /// oldest is closed) and 64 prompts (its oldest is dismissed, with Completed).
    @Test func aClientCannotPileUpSessionsOrPrompts() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 30)
        #expect(try home.kc(["lock"]).status == 0)
        let out = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call, MatchRule, message_bus
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            S = '/org/freedesktop/secrets'
            svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            def call(address, member, sig, body):
                r = c.send_and_get_reply(new_method_call(address, member, sig, body), timeout=30)
                return (r.header.message_type.name, r.body)
            for i in range(1101):
                kind, body = call(svc, 'OpenSession', 'sv', ('plain', ('s', '')))
            last = int(body[1].rsplit('/', 1)[1])
            for n, name in ((last - 1100, 'first'), (last, 'last')):
                kind, body = call(svc, 'GetSecrets', 'aoo', ([], S + '/session/%d' % n))
                print(name, 'session', kind)
            rule = MatchRule(type='signal', interface='org.freedesktop.Secret.Prompt', member='Completed')
            c.send_and_get_reply(message_bus.AddMatch(rule))
            with c.filter(rule, bufsize=1000) as completed:
                prompts = [call(svc, 'Unlock', 'ao', ([S + '/collection/login'],))[1][1] for i in range(70)]
                dismissed = {m.header.fields[1] for m in completed if m.body[0]}
            for path, name in ((prompts[0], 'first'), (prompts[-1], 'last')):
                kind, body = call(DBusAddress(path, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Prompt'), 'Prompt', 's', ('',))
                print(name, 'prompt', kind)
            print('dismissed', prompts[0] in dismissed, len(dismissed))
            """, timeout: 90)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("first session error\nlast session method_return"), "\(out.stdout)")
        #expect(out.stdout.contains("first prompt error\nlast prompt method_return"), "\(out.stdout)")
        #expect(out.stdout.contains("dismissed True 6\n"), "the 6 oldest prompts completed as dismissed: \(out.stdout)")
    }

    /// Two clients asked for the same new collection while the default keychain was
    /// locked; when `kc unlock` ran, the first prompt made it, and the second deleted the
    /// password the first had kept, found the file there and gave up: a keychain whose only
    /// password was gone (every item stored in it lost at the next lock). The second now
    /// leaves the existing keychain and its password alone and completes with its path.
    @Test func twoPromptsForOneNewCollectionKeepItsPassword() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 20)
        #expect(try home.kc(["lock"]).status == 0)
        let clients = try (0..<2).map { _ in
            try Spawn.start(
                [
                    "/usr/bin/python3", "-c",
                    """
                    import secretstorage
                    c = secretstorage.dbus_init()
                    print(secretstorage.create_collection(c, 'dup').collection_path)
                    """
                ], environment: bus.environment, timeout: 30)
        }
        usleep(700_000)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        for client in clients {
            let out = try client.finish()
            #expect(out.status == 0 && out.stdout == "/org/freedesktop/secrets/collection/dup\n", "\(out.stdout)\(out.stderr)")
        }
        #expect(try home.kc(["lock", "--all"]).status == 0)
        let out = try home.sh("kc find -s kc-secret-service -a dup -w | kc unlock -k dup --password-stdin", password: KCHome.password)
        #expect(out.status == 0, "the kept password opens the collection: \(out.stderr)")
    }

    /// A collection whose kept password is wrong (its keychain made again under that name
    /// with another password): every Unlock of it, and every prompt waiting for it at every
    /// 0.2 s tick, had the agent run Argon2 with that password. Twenty waiting prompts kept
    /// the provider busy for two seconds of every tick, and every other client waited. A refused
    /// kept password is now tried again only after 5 seconds.
    @Test func aWrongKeptPasswordDoesNotStallTheProvider() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 60)
        #expect(try home.kc(["create", "stale", "--kdf", "interactive"], password: "its-own-password").status == 0)
        #expect(try home.kc(["add", "-s", "kc-secret-service", "-a", "stale"], stdin: Data("a-wrong-password".utf8)).status == 0)
        let out = try bus.python(
            """
            import time
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            S = '/org/freedesktop/secrets'
            def call(c, path, interface, member, sig, body):
                a = DBusAddress(path, bus_name='org.freedesktop.secrets', interface=interface)
                return c.send_and_get_reply(new_method_call(a, member, sig, body), timeout=60).body
            c, other = open_dbus_connection('SESSION'), open_dbus_connection('SESSION')
            start = time.monotonic()
            for i in range(20):
                prompt = call(c, S, 'org.freedesktop.Secret.Service', 'Unlock', 'ao', ([S + '/collection/stale'],))[1]
                call(c, prompt, 'org.freedesktop.Secret.Prompt', 'Prompt', 's', ('',))
            print('prompts %.2f' % (time.monotonic() - start))
            slowest = 0
            for i in range(8):
                start = time.monotonic()
                call(other, S, 'org.freedesktop.Secret.Service', 'ReadAlias', 's', ('default',))
                slowest = max(slowest, time.monotonic() - start)
                time.sleep(0.3)
            print('slowest %.2f' % slowest)
            """, timeout: 120)
        #expect(out.status == 0, "\(out.stderr)")
        let seconds = out.stdout.split(separator: "\n").map { Double($0.split(separator: " ").last ?? "") ?? 99 }
        #expect(seconds.count == 2 && seconds[0] < 5, "20 Unlock and Prompt calls took \(out.stdout)")
        #expect(seconds.count == 2 && seconds[1] < 1.5, "another client waited for ReadAlias: \(out.stdout)")
    }

    /// The provider took NameLost and NameOwnerChanged from anyone: another user sent it a
    /// NameLost of its own making and it quit (leaving the name free to take), or a
    /// NameOwnerChanged saying a client had left and it closed that client's sessions.
    /// Only the bus itself (sender org.freedesktop.DBus) is believed now.
    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
    func anotherUserCannotForgeTheBusSignals() throws {
        let home = try KCHome(base: OtherUser.base)
        try home.createKeychain()
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let bus = try PrivateBus(home, anyUser: true)
        let out = try bus.python(
            """
            import os, time
            from jeepney import DBusAddress, new_method_call, new_signal
            from jeepney.low_level import HeaderFields
            from jeepney.io.blocking import open_dbus_connection
            DBUS = DBusAddress('/org/freedesktop/DBus', bus_name='org.freedesktop.DBus', interface='org.freedesktop.DBus')
            S = '/org/freedesktop/secrets'
            svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            c = open_dbus_connection('SESSION')
            session = c.send_and_get_reply(new_method_call(svc, 'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
            def provider():
                owner = c.send_and_get_reply(new_method_call(DBUS, 'GetNameOwner', 's', ('org.freedesktop.secrets',))).body[0]
                return owner, c.send_and_get_reply(new_method_call(DBUS, 'GetConnectionUnixProcessID', 's', (owner,))).body[0]
            owner, pid = provider()
            child = os.fork()
            if child == 0:
                os.setgroups([]); os.setgid(65534); os.setuid(65534)
                a = open_dbus_connection('SESSION')
                driver = DBusAddress('/org/freedesktop/DBus', interface='org.freedesktop.DBus')
                for member, sig, body in (('NameOwnerChanged', 'sss', (c.unique_name, c.unique_name, '')),
                                          ('NameLost', 's', ('org.freedesktop.secrets',))):
                    m = new_signal(driver, member, sig, body)
                    m.header.fields[HeaderFields.destination] = owner
                    a.send(m)
                time.sleep(0.3)
                os._exit(0)
            os.waitpid(child, 0)
            time.sleep(1)
            print('same provider', provider() == (owner, pid))
            r = c.send_and_get_reply(new_method_call(svc, 'GetSecrets', 'aoo', ([], session)))
            print('session', r.header.message_type.name)
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "same provider True\nsession method_return\n", "\(out.stdout)")
    }

    /// The other side of `anotherUserCannotForgeTheBusSignals`: the bus's own
    /// NameOwnerChanged is believed, so a client that leaves takes its prompts with it (no
    /// Completed is emitted for them when the keychain is unlocked later).
    @Test func aClientThatLeavesTakesItsPromptsWithIt() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 30)
        #expect(try home.kc(["lock"]).status == 0)
        let watcher = try Spawn.start(
            [
                "/usr/bin/python3", "-c",
                """
                import time
                from jeepney import DBusAddress, new_method_call, MatchRule, message_bus
                from jeepney.io.blocking import open_dbus_connection
                S = '/org/freedesktop/secrets'
                svc = DBusAddress(S, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
                w = open_dbus_connection('SESSION')
                rule = MatchRule(type='signal', interface='org.freedesktop.Secret.Prompt', member='Completed')
                w.send_and_get_reply(message_bus.AddMatch(rule))
                prompts = []
                for leaves in (True, False):
                    c = open_dbus_connection('SESSION')
                    prompt = c.send_and_get_reply(new_method_call(svc, 'Unlock', 'ao', ([S + '/collection/login'],))).body[1]
                    c.send_and_get_reply(new_method_call(DBusAddress(prompt, bus_name='org.freedesktop.secrets',
                                         interface='org.freedesktop.Secret.Prompt'), 'Prompt', 's', ('',)))
                    prompts.append(prompt)
                    if leaves: c.close()
                open('\(home.directory)/ready', 'w').close()
                completed = []
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    try: m = w.receive(timeout=0.5)
                    except TimeoutError: continue
                    if m.header.fields.get(3) == 'Completed':
                        completed.append(prompts.index(m.header.fields[1]))
                        deadline = min(deadline, time.monotonic() + 1)
                print(completed)
                """
            ], environment: bus.environment, timeout: 30)
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: home.directory + "/ready") { usleep(50_000) }
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let out = try watcher.finish()
        #expect(out.status == 0 && out.stdout == "[1]\n", "only the prompt of the client still there: \(out.stdout)\(out.stderr)")
    }

    /// `eval "$(kc secret-service --start)"` with a bus address that the bus library takes
    /// but that is full of shell syntax (sd-bus ignores keys it does not know): the line
    /// gives the variable exactly that text and runs nothing.
    @Test func startLinesAreSafeToEvalWithAnyAddress() throws {
        let home = try KCHome()
        try home.createKeychain()
        let bus = try PrivateBus(home)
        let marker = home.directory + "/ran"
        let address = bus.address + ",x='$(touch \(marker))'`touch \(marker)`\"$(touch \(marker))\";touch"
        var env = bus.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["PATH"] = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let out = try Spawn.run(
            ["/bin/sh", "-c", #"eval "$(kc secret-service --start)" && printf %s "$DBUS_SESSION_BUS_ADDRESS""#],
            environment: env)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == address, "\(out.stdout)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the shell ran part of the address")
    }

    /// Another client of the same user names a client's session and prompt: it cannot
    /// read secrets through the session, close it, or answer or dismiss the prompt. Held.
    @Test func anotherClientsSessionAndPromptAreNotItsOwn() throws {
        let (home, bus) = try SecretToolTests.unlocked(promptTimeout: 30)
        #expect(try bus.run(["secret-tool", "store", "--label=t", "service", "s", "username", "u"], stdin: "v").status == 0)
        let out = try bus.python(
            """
            import subprocess
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            S = '/org/freedesktop/secrets'
            def call(c, path, interface, member, sig='', body=()):
                a = DBusAddress(path, bus_name='org.freedesktop.secrets', interface=interface)
                r = c.send_and_get_reply(new_method_call(a, member, sig, body), timeout=10)
                return r.header.fields.get(4) or 'ok', r.body
            SVC, PROMPT = 'org.freedesktop.Secret.Service', 'org.freedesktop.Secret.Prompt'
            a, b = open_dbus_connection('SESSION'), open_dbus_connection('SESSION')
            session = call(a, S, SVC, 'OpenSession', 'sv', ('dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', (5).to_bytes(128, 'big'))))[1][1]
            items = call(a, S, SVC, 'SearchItems', 'a{ss}', ({'service': 's'},))[1][0]
            print('b reads', call(b, S, SVC, 'GetSecrets', 'aoo', (items, session))[0])
            print('b reads item', call(b, items[0], 'org.freedesktop.Secret.Item', 'GetSecret', 'o', (session,))[0])
            print('b closes', call(b, session, 'org.freedesktop.Secret.Session', 'Close')[0])
            print('a reads', len(call(a, S, SVC, 'GetSecrets', 'aoo', (items, session))[1][0]))
            subprocess.run(['\(KCBinary.path)', 'lock'], check=True)
            prompt = call(a, S, SVC, 'Unlock', 'ao', ([S + '/collection/login'],))[1][1]
            print('b prompts', call(b, prompt, PROMPT, 'Prompt', 's', ('',))[0])
            print('b dismisses', call(b, prompt, PROMPT, 'Dismiss')[0])
            print('a dismisses', call(a, prompt, PROMPT, 'Dismiss')[0])
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(
            out.stdout == """
                b reads org.freedesktop.Secret.Error.NoSession
                b reads item org.freedesktop.Secret.Error.NoSession
                b closes ok
                a reads 1
                b prompts org.freedesktop.Secret.Error.NoSuchObject
                b dismisses org.freedesktop.Secret.Error.NoSuchObject
                a dismisses ok

                """, "\(out.stdout)")
        _ = home
    }
}
