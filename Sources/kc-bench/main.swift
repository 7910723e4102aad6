// kc-bench: the in-process half of `make bench` (bench/bench.sh); not installed.
//
//   KC_PASSWORD=... kc-bench populate PATH COUNT PROFILE
//       creates a keychain with COUNT generic passwords (service svc-I, account acct-I) in
//       one transaction through the library, and prints {"populate_items_per_s": …}.
//   KC_PASSWORD=... kc-bench library PATH COUNT
//       on a keychain made by populate: SecItemCopyMatching by primary key (lookups/s),
//       a case-insensitive query and a query on an attribute with no index (ms), and
//       SecItemAdd of new items one by one, each its own durable commit (items/s), the row
//       scan of every open and of an agent that finds its file changed (verify_ms), and
//       the whole-keychain check of `kc verify` (check_ms).
//   KC_PASSWORD=... kc-bench pairs PATH COUNT
//       creates a keychain with COUNT generic passwords, each with a Secret Service map as
//       Python's keyring stores them (service svc-I, username user-I, and an application
//       pair every item shares), then times SearchItems-style queries (SecItemCopyMatching
//       with kcAttrSecretServiceAttributes, attributes returned, every match): two pairs
//       naming one item, a shared pair with a unique one, and the secret of one item
//       (`docs/format.md` §7). Prints medians in ms.
//   KC_PASSWORD=... kc-bench import PATH COUNT
//       creates a keychain and imports COUNT logins (internet passwords with server,
//       account, path, label, comment and secret) with Keychain.importItems in one
//       transaction, then the same again (every item found unchanged); prints items/s.
//
// Prints one JSON object per line. Times come from CLOCK_MONOTONIC; the figures are medians
// of several rounds.
import BenchSupport
import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Ends the program with `message` on stderr.
func fail(_ message: String) -> Never { BenchOutput.fail("kc-bench", message) }

func password() -> SecureBytes {
    guard let raw = getenv("KC_PASSWORD") else { fail("KC_PASSWORD is not set") }
    do { return try SecureBytes(copying: Array(String(cString: raw).utf8)) } catch { fail("\(error)") }
}

func item(_ i: Int) -> [String: Any] {
    [
        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecAttrAccount: "acct-\(i)",
        kSecAttrComment: "comment-\(i)", kSecValueData: Array("secret-\(i)-0123456789abcdef".utf8)
    ]
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let count = Int(arguments[3]), count > 0 else {
    fail("usage: kc-bench populate PATH COUNT PROFILE | kc-bench library PATH COUNT")
}
let path = arguments[2]

do {
    switch arguments[1] {
    case "populate":
        guard arguments.count == 5, let profile = KDFProfile(rawValue: arguments[4]) else { fail("unknown KDF profile") }
        let keychain = try Keychain.create(at: path, password: password(), profile: profile)
        let start = BenchClock.now()
        try keychain.addAll((0..<count).lazy.map(item))
        let seconds = BenchClock.now() - start
        BenchOutput.emit([("populate_items", Double(count)), ("populate_items_per_s", Double(count) / seconds)])

    case "library":
        let keychain = try Keychain.open(at: path, password: password())
        var status: OSStatus = errSecSuccess
        var result: Any?

        // Lookups by primary key (service + account), the secret returned: rounds of 2,000.
        var rng = SystemRandomNumberGenerator()
        var rates: [Double] = []
        for _ in 0..<5 {
            let start = BenchClock.now()
            for _ in 0..<2000 {
                let i = Int.random(in: 0..<count, using: &rng)
                status = SecItemCopyMatching(
                    [
                        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)",
                        kSecAttrAccount: "acct-\(i)", kSecReturnData: true
                    ], &result, keychain: keychain)
                guard status == errSecSuccess else { fail("lookup of svc-\(i): status \(status)") }
            }
            rates.append(2000 / (BenchClock.now() - start))
        }
        let lookups = BenchStatistics.median(rates)

        // A case-insensitive query and one on the comment (no index): each scans the class.
        func timed(_ query: [String: Any]) -> Double {
            var times: [Double] = []
            for _ in 0..<3 {
                let start = BenchClock.now()
                status = SecItemCopyMatching(query, &result, keychain: keychain)
                guard status == errSecSuccess else { fail("scan query: status \(status)") }
                times.append(BenchClock.now() - start)
            }
            return BenchStatistics.median(times) * 1000
        }
        let target = count / 2
        let ignoreCase = timed([
            kSecClass: kSecClassGenericPassword, kSecAttrService: "SVC-\(target)",
            kSecMatchCaseInsensitive: true, kSecReturnAttributes: true
        ])
        let unindexed = timed([
            kSecClass: kSecClassGenericPassword, kSecAttrComment: "comment-\(target)",
            kSecReturnAttributes: true
        ])

        // SecItemAdd one item at a time, each a durable commit.
        let adds = 200
        let start = BenchClock.now()
        for i in 0..<adds {
            status = SecItemAdd(item(count + i), nil, keychain: keychain)
            guard status == errSecSuccess else { fail("add: status \(status)") }
        }
        let addRate = Double(adds) / (BenchClock.now() - start)

        // The row scan every open runs, and an open keychain (the agent) runs again after
        // someone else changed the file; then the whole-keychain check of `kc verify`.
        func timedCheck(_ body: () throws -> Void) -> Double {
            var times: [Double] = []
            for _ in 0..<3 {
                let start = BenchClock.now()
                do { try body() } catch { fail("check: \(error)") }
                times.append(BenchClock.now() - start)
            }
            return BenchStatistics.median(times) * 1000
        }
        let verifyMS = timedCheck { try keychain.verify() }
        let checkMS = timedCheck { _ = try keychain.check() }
        BenchOutput.emit([
            ("items", Double(count)), ("lookups_per_s", lookups), ("ignore_case_ms", ignoreCase),
            ("unindexed_ms", unindexed), ("adds_per_s", addRate), ("verify_ms", verifyMS), ("check_ms", checkMS)
        ])

    case "pairs":
        let keychain = try Keychain.create(at: path, password: password(), profile: .interactive)
        var start = BenchClock.now()
        try keychain.addAll(
            (0..<count).lazy.map { i in
                [
                    kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecAttrAccount: "user-\(i)",
                    kcAttrSecretServiceAttributes: ["service": "svc-\(i)", "username": "user-\(i)", "application": "Python keyring library"],
                    kSecValueData: Array("secret-\(i)-0123456789abcdef".utf8)
                ]
            })
        let populate = BenchClock.now() - start
        var rng = SystemRandomNumberGenerator()
        var result: Any?
        // Rounds of 1,000 searches for random items; the median of the rounds' means.
        func timedSearch(_ query: (Int) -> [String: Any]) -> Double {
            var means: [Double] = []
            for _ in 0..<5 {
                let start = BenchClock.now()
                for _ in 0..<1000 {
                    let i = Int.random(in: 0..<count, using: &rng)
                    let status = SecItemCopyMatching(query(i), &result, keychain: keychain)
                    guard status == errSecSuccess, (result as? [Any])?.count ?? 1 == 1 else { fail("search for item \(i): status \(status)") }
                }
                means.append((BenchClock.now() - start) / 1000)
            }
            return BenchStatistics.median(means) * 1000
        }
        let twoPairs = timedSearch { i in
            [
                kSecClass: kSecClassGenericPassword, kcAttrSecretServiceAttributes: ["service": "svc-\(i)", "username": "user-\(i)"],
                kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ]
        }
        let sharedAndUnique = timedSearch { i in
            [
                kSecClass: kSecClassGenericPassword, kcAttrSecretServiceAttributes: ["application": "Python keyring library", "service": "svc-\(i)"],
                kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ]
        }
        let secret = timedSearch { i in
            [
                kSecClass: kSecClassGenericPassword, kcAttrSecretServiceAttributes: ["service": "svc-\(i)", "username": "user-\(i)"],
                kSecReturnData: true
            ]
        }
        start = BenchClock.now()
        try keychain.verify()
        let verifyMS = (BenchClock.now() - start) * 1000
        BenchOutput.emit([
            ("pairs_items", Double(count)), ("pairs_populate_items_per_s", Double(count) / populate),
            ("pairs_two_pairs_ms", twoPairs), ("pairs_shared_and_unique_ms", sharedAndUnique),
            ("pairs_secret_ms", secret), ("pairs_verify_ms", verifyMS)
        ])

    case "import":
        let keychain = try Keychain.create(at: path, password: password(), profile: .interactive)
        let items = (0..<count).map { i in
            ImportItem(
                query: [
                    kSecClass: kSecClassInternetPassword, kSecAttrServer: "site\(i).example.com",
                    kSecAttrAccount: "user\(i)", kSecAttrPath: "/login", kSecAttrProtocol: kSecAttrProtocolHTTPS,
                    kSecAttrAuthenticationType: kSecAttrAuthenticationTypeDefault, kSecAttrLabel: "Site \(i)",
                    kSecAttrComment: "imported note \(i)", kSecValueData: Data("pw-\(i)-0123456789abcdef".utf8)
                ],
                source: "line \(i + 2)")
        }
        var start = BenchClock.now()
        let first = try keychain.importItems(items)
        let created = BenchClock.now() - start
        guard first.allSatisfy({ $0 == .created }) else { fail("the first import did not create every item") }
        start = BenchClock.now()
        let second = try keychain.importItems(items)
        let again = BenchClock.now() - start
        guard
            second.allSatisfy({
                if case .unchanged = $0 { return true }; return false
            })
        else { fail("the second import changed items") }
        BenchOutput.emit([
            ("import_items", Double(count)), ("import_items_per_s", Double(count) / created),
            ("reimport_items_per_s", Double(count) / again)
        ])

    default:
        fail("unknown mode \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
