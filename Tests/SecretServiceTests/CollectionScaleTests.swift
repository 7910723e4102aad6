import Foundation
import Testing
import KeychainCore
import AgentWire
import KCTestSupport

/// Issue 31, "Scale": reading a property of a collection costs the same at 10 items and at
/// 1,000,000 (no property but `Items` lists the keychain), and `Items` and `SearchItems`
/// go page by page through the agent, so no agent reply has to hold the whole listing. The
/// provider's traffic with the real agent is watched through `AgentRelay`.
@Suite struct CollectionScaleTests {
    static let count = 2_500

    /// A home whose default keychain holds `count` items with Secret Service attributes
    /// (added in this process, in one transaction), unlocked in the agent.
    static func filled() throws -> KCHome {
        let home = try KCHome()
        try home.createKeychain()
        do {
            let keychain = try Keychain.open(at: home.defaultKeychain, password: try SecureBytes(copying: Array(KCHome.password.utf8)))
            defer { keychain.lock() }
            try keychain.addAll(
                (0..<count).lazy.map { i -> [String: Any] in
                    [
                        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecAttrAccount: "user-\(i)",
                        kSecValueData: Data("pw-\(i)".utf8),
                        kcAttrSecretServiceAttributes: ["application": "scale", "service": "svc-\(i)", "username": "user-\(i)"]
                    ]
                })
        }
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        return home
    }

    static let client = """
        import sys
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        c = open_dbus_connection('SESSION')
        def call(path, interface, method, signature=None, body=()):
            a = DBusAddress(path, bus_name='org.freedesktop.secrets', interface=interface)
            r = c.send_and_get_reply(new_method_call(a, method, signature, body), timeout=60)
            if r.header.message_type.name != 'method_return': sys.exit(f'{method}: {r.body}')
            return r.body
        col = '/org/freedesktop/secrets/collection/login'
        def get(name):
            return call(col, 'org.freedesktop.DBus.Properties', 'Get', 'ss', ('org.freedesktop.Secret.Collection', name))[0][1]

        """

    /// `Locked`, `Label`, `Created` and `Modified` of a collection of 2,500 items: the
    /// provider asks the agent for its status only, never for an item.
    @Test func propertyReadsDoNotTouchItems() throws {
        let home = try Self.filled()
        let relay = try AgentRelay.start(home)
        defer { relay.stop() }
        let bus = try PrivateBus(home)
        let out = try bus.python(
            Self.client + """
                print(get('Locked'), get('Label'), get('Created') > 0, get('Modified') > 0)
                """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "False login True True\n", "\(out.stdout)")
        #expect(relay.connections >= 1, "the provider went through the relay")
        #expect(relay.operations.isEmpty, "operations sent for property reads: \(relay.operations)")
        #expect(relay.requestTypes.allSatisfy { $0 == 3 }, "\(relay.requestTypes)")
    }

    /// `Items` of a collection of 2,500 items and `SearchItems` that match them all (a scan
    /// and a pair lookup), with pages of 100 items (`KC_PAGE_ITEMS`): every item once, in
    /// 25 pages or more each, never one reply with the whole listing.
    @Test func itemsAndSearchesGoPageByPage() throws {
        let home = try Self.filled()
        let relay = try AgentRelay.start(home)
        defer { relay.stop() }
        let bus = try PrivateBus(home, daemonEnvironment: ["KC_PAGE_ITEMS": "100"])
        let out = try bus.python(
            Self.client + """
                items = get('Items')
                print(len(items), len(set(items)))
                svc = '/org/freedesktop/secrets'
                unlocked, locked = call(svc, 'org.freedesktop.Secret.Service', 'SearchItems', 'a{ss}', ({},))
                print(len(unlocked), sorted(unlocked) == sorted(items), len(locked))
                found = call(col, 'org.freedesktop.Secret.Collection', 'SearchItems', 'a{ss}', ({'application': 'scale'},))[0]
                print(len(found), sorted(found) == sorted(items))
                """, timeout: 60)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "\(Self.count) \(Self.count)\n\(Self.count) True 0\n\(Self.count) True\n", "\(out.stdout)")
        let pages = relay.operations.filter { $0 == 10 }.count
        #expect(pages >= 3 * Self.count / 100, "\(pages) pages")
        #expect(!relay.operations.contains(2), "a listing went as one copyMatching: \(relay.operations)")
        #expect(relay.replySizes.allSatisfy { $0 < 64 << 10 }, "\(relay.replySizes.max() ?? 0) bytes in one reply")
    }

    /// An agent whose pages each move on but never end (a same-user impostor answering
    /// every page with 40,000 references and a next place one further): `Items` stops with
    /// `LimitsExceeded` once the references received pass what one reply may carry, instead
    /// of asking for ever and holding the provider, and the provider answers the next call.
    @Test func itemsFromAnAgentWhosePagesNeverEndFails() throws {
        let home = try KCHome()
        try home.createKeychain()
        var item = ByteWriter()
        try ValueCodec.encode(Data(repeating: 7, count: 16), into: &item)
        _ = try AgentImpostor.start(home, holds: home.defaultKeychain, version: AgentProtocol.version, endlessPages: (40_000, item.bytes))
        let bus = try PrivateBus(home, daemonEnvironment: ["KC_PAGE_ITEMS": "40000"])
        let out = try bus.python(
            """
            import sys
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            c = open_dbus_connection('SESSION')
            col = DBusAddress('/org/freedesktop/secrets/collection/login', bus_name='org.freedesktop.secrets', interface='org.freedesktop.DBus.Properties')
            for name in ('Items', 'Label'):
                r = c.send_and_get_reply(new_method_call(col, 'Get', 'ss', ('org.freedesktop.Secret.Collection', name)), timeout=20)
                print(r.header.message_type.name, r.header.fields.get(4, ''), str(r.body)[:200])
            """, timeout: 30)
        #expect(out.status == 0, "\(out.stderr)")
        let answers = out.stdout.split(separator: "\n")
        #expect(answers.first?.hasPrefix("error org.freedesktop.DBus.Error.LimitsExceeded") == true, "\(out.stdout)")
        #expect(answers.count == 2 && answers[1].hasPrefix("method_return") && answers[1].contains("login"), "\(out.stdout)")
    }
}
