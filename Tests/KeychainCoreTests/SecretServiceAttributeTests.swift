import Foundation
import Testing
@testable import KeychainCore

/// Format 3 (issue 17): a generic password's Secret Service attribute map
/// (`kcAttrSecretServiceAttributes`) and content type (`kcAttrContentType`), on a real
/// keychain file: stored encrypted, part of the primary key when not empty, searched by
/// the pair index (docs/format.md §4, §5, §7).
@Suite struct SecretServiceAttributeTests {
    static let map = kcAttrSecretServiceAttributes

    /// Adds a generic password with a map (and anything else in `extra`).
    static func add(_ t: TempKeychain, _ pairs: [String: String], service: String = "git", secret: String, _ extra: [String: Any] = [:]) throws {
        var q = genp([kSecAttrService: service, Self.map: pairs, kSecValueData: Data(secret.utf8)])
        for (k, v) in extra { q[k] = v }
        try t.keychain.add(q)
    }

    /// The secrets of every item matching `query`, in insertion order; [] when none.
    static func secrets(_ k: Keychain, _ query: [String: Any]) throws -> [String] {
        var q = genp(query)
        q[kSecMatchLimit] = kSecMatchLimitAll
        q[kSecReturnData] = true
        do {
            return (try k.copyMatching(q) as? [Data] ?? []).map { String(decoding: $0, as: UTF8.self) }
        } catch let e as KeychainError where e.status == errSecItemNotFound {
            return []
        }
    }

    /// Three git credentials (as git's libsecret helper stores them) and one plain item.
    static func gitKeychain() throws -> TempKeychain {
        let t = try TempKeychain()
        try add(t, ["xdg:schema": "org.git.Password", "server": "github.com", "user": "alice", "protocol": "https"], secret: "alice-gh")
        try add(t, ["xdg:schema": "org.git.Password", "server": "github.com", "user": "bob", "protocol": "https"], secret: "bob-gh")
        try add(t, ["xdg:schema": "org.git.Password", "server": "gitlab.com", "user": "alice", "protocol": "https"], secret: "alice-gl")
        try t.keychain.add(genp([kSecAttrService: "git", kSecAttrAccount: "plain", kSecValueData: Data("plain".utf8)]))
        return t
    }

    @Test func theMapAndContentTypeComeBackAsGiven() throws {
        let t = try TempKeychain()
        let pairs = ["service": "pypi", "username": "me", "": "empty name", "ünïcode": "välue\n"]
        try Self.add(t, pairs, secret: "s3cret", [kcAttrContentType: "text/plain"])
        let attributes = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "git", kSecReturnAttributes: true])) as? [String: Any])
        #expect(attributes[Self.map] as? [String: String] == pairs)
        #expect(attributes[kcAttrContentType] as? String == "text/plain")
        // Stored encrypted: no name or value is in the file.
        let raw = t.rawBytes()
        for text in ["pypi", "username", "ünïcode", "text/plain"] { #expect(!contains(raw, Array(text.utf8)), "\(text) in the file") }
        #expect(try t.reopen().check() == 1)
    }

    @Test func aQueryMatchesEveryItemWhoseMapHoldsItsPairs() throws {
        let t = try Self.gitKeychain()
        #expect(try Self.secrets(t.keychain, [Self.map: ["server": "github.com"]]) == ["alice-gh", "bob-gh"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["server": "github.com", "user": "alice"]]) == ["alice-gh"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["user": "alice"]]) == ["alice-gh", "alice-gl"])
        #expect(
            try Self.secrets(t.keychain, [Self.map: ["xdg:schema": "org.git.Password", "protocol": "https", "user": "alice", "server": "gitlab.com"]]) == [
                "alice-gl"
            ])
        // Pairs compare whole and by bytes: no prefix, no other case, no pair split otherwise.
        for miss: [String: String] in [
            ["server": "github"], ["server": "GitHub.com"], ["Server": "github.com"],
            ["server": "github.com", "user": "carol"], ["serve": "rgithub.com"]
        ] {
            #expect(try Self.secrets(t.keychain, [Self.map: miss]).isEmpty, "\(miss)")
        }
        // Without a map the query sees every item, with or without one.
        #expect(try Self.secrets(t.keychain, [kSecAttrService: "git"]).count == 4)
        // The map is case-sensitive even when kSecMatchCaseInsensitive asks otherwise.
        #expect(try Self.secrets(t.keychain, [Self.map: ["server": "GITHUB.COM"], kSecMatchCaseInsensitive: true]).isEmpty)
    }

    @Test func anEmptyMapInAQueryFindsTheItemsWithoutOne() throws {
        let t = try Self.gitKeychain()
        #expect(try Self.secrets(t.keychain, [Self.map: [String: String]()]) == ["plain"])
        #expect(try Self.secrets(t.keychain, [Self.map: [String: String](), kSecAttrAccount: "plain", kSecAttrAccessGroup: ""]) == ["plain"])
        // An empty map given to add is no map: the item is a plain one.
        try t.keychain.add(genp([kSecAttrService: "other", Self.map: [String: String](), kSecValueData: Data("other".utf8)]))
        let attributes = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "other", kSecReturnAttributes: true])) as? [String: Any])
        #expect(attributes[Self.map] == nil)
        #expect(try Self.secrets(t.keychain, [Self.map: [String: String]()]) == ["plain", "other"])
    }

    @Test func aQueryCombinesPairsWithOtherAttributes() throws {
        let t = try TempKeychain()
        try Self.add(t, ["app": "x"], service: "one", secret: "one-x", [kSecAttrAccount: "a"])
        try Self.add(t, ["app": "x"], service: "two", secret: "two-x", [kSecAttrAccount: "a", kSecAttrLabel: "L"])
        try Self.add(t, ["app": "y"], service: "two", secret: "two-y", [kSecAttrAccount: "a", kcAttrContentType: "text/plain"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["app": "x"], kSecAttrService: "two"]) == ["two-x"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["app": "x"], kSecAttrLabel: "L"]) == ["two-x"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["app": "x"], kSecAttrAccount: "a"]) == ["one-x", "two-x"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["app": "x"], kSecAttrService: "three"]).isEmpty)
        #expect(try Self.secrets(t.keychain, [kcAttrContentType: "text/plain"]) == ["two-y"])
        // Every primary-key attribute given: the map still matches as a subset.
        #expect(try Self.secrets(t.keychain, [Self.map: ["app": "y"], kSecAttrService: "two", kSecAttrAccount: "a", kSecAttrAccessGroup: ""]) == ["two-y"])
        #expect(try t.keychain.count(genp([Self.map: ["app": "x"], kSecMatchLimit: kSecMatchLimitAll])) == 2)
    }

    @Test func theMapIsPartOfThePrimaryKeyOnlyWhenNotEmpty() throws {
        let t = try TempKeychain()
        try Self.add(t, ["k": "1"], secret: "first", [kSecAttrAccount: "a"])
        // The same service and account with another map, or with none, are other items.
        try Self.add(t, ["k": "2"], secret: "second", [kSecAttrAccount: "a"])
        try Self.add(t, ["k": "1", "extra": "x"], secret: "superset", [kSecAttrAccount: "a"])
        try t.keychain.add(genp([kSecAttrService: "git", kSecAttrAccount: "a", kSecValueData: Data("plain".utf8)]))
        // The same map again (whatever order the dictionary lists it in) is a duplicate.
        expectStatus(errSecDuplicateItem) { try Self.add(t, ["k": "1"], secret: "again", [kSecAttrAccount: "a"]) }
        expectStatus(errSecDuplicateItem) { try Self.add(t, ["extra": "x", "k": "1"], secret: "again", [kSecAttrAccount: "a"]) }
        expectStatus(errSecDuplicateItem) {
            try t.keychain.add(genp([kSecAttrService: "git", kSecAttrAccount: "a", Self.map: [String: String](), kSecValueData: Data("x".utf8)]))
        }
        // The content type is no part of it.
        expectStatus(errSecDuplicateItem) { try Self.add(t, ["k": "2"], secret: "again", [kSecAttrAccount: "a", kcAttrContentType: "text/html"]) }
        #expect(try Self.secrets(t.keychain, [kSecAttrAccount: "a"]) == ["first", "second", "superset", "plain"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["k": "1"]]) == ["first", "superset"])
        // A plain item's primary-key fingerprint is format 2's (KeyHierarchyTests pins the bytes).
        let plain = try #require(
            try t.keychain.copyMatching(genp([kSecAttrAccount: "a", Self.map: [String: String](), kSecReturnPersistentRef: true])) as? Data)
        #expect(try Self.secrets(t.keychain, [kSecValuePersistentRef: plain]) == ["plain"])
    }

    @Test func updateReplacesTheWholeMapAndReindexesIt() throws {
        let t = try Self.gitKeychain()
        let alice = [Self.map: ["server": "github.com", "user": "alice"]] as [String: Any]
        #expect(try t.keychain.update(genp(alice), [Self.map: ["server": "github.com", "user": "alicia"], kcAttrContentType: "text/plain"]) == 1)
        #expect(try Self.secrets(t.keychain, alice).isEmpty)
        #expect(try Self.secrets(t.keychain, [Self.map: ["xdg:schema": "org.git.Password", "server": "github.com"]]) == ["bob-gh"])
        #expect(try Self.secrets(t.keychain, [Self.map: ["user": "alicia"]]) == ["alice-gh"])
        let attributes = try #require(try t.keychain.copyMatching(genp([Self.map: ["user": "alicia"], kSecReturnAttributes: true])) as? [String: Any])
        #expect(attributes[Self.map] as? [String: String] == ["server": "github.com", "user": "alicia"])
        #expect(attributes[kcAttrContentType] as? String == "text/plain")
        // A change that makes two items one primary key changes nothing.
        expectStatus(errSecDuplicateItem) {
            _ = try t.keychain.update(
                genp([Self.map: ["user": "alicia"]]), [Self.map: ["xdg:schema": "org.git.Password", "server": "github.com", "user": "bob", "protocol": "https"]]
            )
        }
        #expect(try Self.secrets(t.keychain, [Self.map: ["user": "alicia"]]) == ["alice-gh"])
        // An empty map removes it: the item becomes a plain one, found by [:].
        #expect(try t.keychain.update(genp([Self.map: ["user": "alicia"]]), [Self.map: [String: String]()]) == 1)
        #expect(try Self.secrets(t.keychain, [Self.map: [String: String]()]) == ["alice-gh", "plain"])
        // The secret alone changes, the map stays indexed.
        #expect(try t.keychain.update(genp([Self.map: ["user": "bob"]]), [kSecValueData: Data("bob-2".utf8)]) == 1)
        #expect(try Self.secrets(t.keychain, [Self.map: ["server": "github.com", "user": "bob"]]) == ["bob-2"])
        #expect(try t.reopen().check() == 4)
    }

    @Test func deleteActsOnTheItemsWhoseMapHoldsThePairs() throws {
        let t = try Self.gitKeychain()
        #expect(try t.keychain.delete(genp([Self.map: ["server": "github.com"]])) == 2)
        #expect(try Self.secrets(t.keychain, [kSecAttrService: "git"]) == ["alice-gl", "plain"])
        expectStatus(errSecItemNotFound) { _ = try t.keychain.delete(genp([Self.map: ["server": "github.com"]])) }
        #expect(try t.keychain.delete(genp([Self.map: [String: String]()])) == 1)
        #expect(try t.sql("SELECT count(*) FROM kc_pairs").trimmingCharacters(in: .whitespacesAndNewlines) == "4")
        #expect(try t.reopen().check() == 1)
    }

    @Test func onlyGenericPasswordsHaveThem() throws {
        let t = try TempKeychain()
        for key in [Self.map, kcAttrContentType] {
            let value: Any = key == Self.map ? ["a": "b"] : "text/plain"
            for itemClass in [kSecClassInternetPassword, kSecClassCertificate, kSecClassKey] {
                expectStatus(errSecNoSuchAttr, "\(key) on \(itemClass)") { _ = try t.keychain.copyMatching([kSecClass: itemClass, key: value]) }
            }
            expectStatus(errSecNoSuchAttr) { try t.keychain.add([kSecClass: kSecClassInternetPassword, kSecAttrServer: "s", key: value]) }
        }
    }

    @Test func malformedMapsAreRefused() throws {
        let t = try TempKeychain()
        for bad: Any in ["a=b", ["a": 1], ["a": Data("b".utf8)], [["a", "b"]]] {
            expectStatus(errSecParam, "\(bad)") { try t.keychain.add(genp([kSecAttrService: "s", Self.map: bad])) }
        }
        let tooMany = Dictionary(uniqueKeysWithValues: (0...AttributeMap.maxPairs).map { ("n\($0)", "v") })
        expectStatus(errSecParam) { try t.keychain.add(genp([kSecAttrService: "s", Self.map: tooMany])) }
        let most = Dictionary(uniqueKeysWithValues: (1...AttributeMap.maxPairs).map { ("n\($0)", "v") })
        try t.keychain.add(genp([kSecAttrService: "s", Self.map: most, kSecValueData: Data("most".utf8)]))
        let long = String(repeating: "x", count: ItemQuery.maxAttributeBytes + 1)
        expectStatus(errSecDataTooLarge) { try t.keychain.add(genp([kSecAttrService: "s", Self.map: ["a": long]])) }
        expectStatus(errSecDataTooLarge) { try t.keychain.add(genp([kSecAttrService: "s", Self.map: [long: "a"]])) }
        expectStatus(errSecParam) { try t.keychain.add(genp([kSecAttrService: "s", kcAttrContentType: 7])) }
        #expect(try Self.secrets(t.keychain, [Self.map: ["n1": "v", "n64": "v"]]) == ["most"])
    }

    /// A re-key re-fingerprints every pair under the new keys; a backup copies the pairs
    /// with their rows. Both are searched by pair afterwards and pass the whole check.
    @Test func rekeyAndBackupKeepThePairsSearchable() throws {
        let t = try Self.gitKeychain()
        let before = try t.sql("SELECT group_concat(hex(fp)) FROM (SELECT fp FROM kc_pairs ORDER BY seq, fp)")
        try t.keychain.rekey(newPassword: try secure("new password"), profile: .interactive)
        #expect(try t.sql("SELECT group_concat(hex(fp)) FROM (SELECT fp FROM kc_pairs ORDER BY seq, fp)") != before, "new keys, new fingerprints")
        #expect(try Self.secrets(t.keychain, [Self.map: ["server": "github.com", "user": "bob"]]) == ["bob-gh"])
        let reopened = try t.reopen(password: "new password")
        #expect(try reopened.check() == 4)
        #expect(try Self.secrets(reopened, [Self.map: ["user": "alice"]]) == ["alice-gh", "alice-gl"])
        let copy = t.directory + "/backup.keychain-db"
        #expect(try t.keychain.backup(to: copy) == 4)
        let restored = try Keychain.open(at: copy, password: try secure("new password"))
        #expect(try Self.secrets(restored, [Self.map: ["server": "gitlab.com"]]) == ["alice-gl"])
        #expect(try Self.secrets(restored, [Self.map: [String: String]()]) == ["plain"])
    }

    /// The agent decodes a dictionary as `[String: Any]`: the core takes it as a map.
    @Test func aMapDecodedAsStringToAnyIsTheSameMap() throws {
        let t = try Self.gitKeychain()
        let decoded: [String: Any] = ["server": "github.com", "user": "bob"]
        #expect(try Self.secrets(t.keychain, [Self.map: decoded]) == ["bob-gh"])
        expectStatus(errSecParam) { _ = try t.keychain.copyMatching(genp([Self.map: ["server": 1] as [String: Any]])) }
    }

    /// A search by pairs is an index lookup: the planner picks the pair index, SQLite's plan
    /// searches indexes only, and only the items that match are read and decrypted.
    @Test func aSearchByPairsIsAnIndexLookup() throws {
        let t = try TempKeychain()
        try t.keychain.addAll(
            (0..<300).lazy.map { i in
                genp([
                    kSecAttrService: "svc", kSecAttrAccount: "acct-\(i)", Self.map: ["xdg:schema": "org.example", "n": "\(i)", "parity": "\(i % 2)"],
                    kSecValueData: Data("s-\(i)".utf8)
                ])
            })
        let q = try ItemQuery(genp([Self.map: ["xdg:schema": "org.example", "n": "7"]]), for: .copyMatching)
        let codec = RowCodec(keys: try t.keychain.unlockedKeys())
        let lookup = try t.keychain.plan(q, itemClass: .genericPassword, conditions: q.attributes, codec: codec)
        guard case .pairs(let fingerprints, let indexes) = lookup else { Issue.record("planned \(lookup)"); return }
        #expect(fingerprints.count == 2 && indexes.isEmpty)

        let store = try #require(t.keychain.store as? SQLiteItemStore)
        var read = 0
        try store.forEachRow(lookup, includeData: false) { _ in
            read += 1; return true
        }
        #expect(read == 1, "rows read for one match")
        let parity = try ItemQuery(genp([Self.map: ["parity": "1", "xdg:schema": "org.example"], kSecAttrService: "svc"]), for: .copyMatching)
        let parityLookup = try t.keychain.plan(parity, itemClass: .genericPassword, conditions: parity.attributes, codec: codec)
        read = 0
        try store.forEachRow(parityLookup, includeData: false) { _ in
            read += 1; return true
        }
        #expect(read == 150)

        // SQLite's own plan for the statement of two pairs and one index column: searches only.
        let sql = SQLiteItemStore.pairLookupSQL(columns: "kc_items.seq", pairs: 2, conditions: [.service])
        let plan = try store.database.queryPlan(sql)
        #expect(!plan.isEmpty && plan.allSatisfy { $0.hasPrefix("SEARCH") || $0.hasPrefix("CORRELATED") }, "\(plan)")
        #expect(!plan.joined().contains("TEMP B-TREE"), "sorted in memory: \(plan)")
    }

    /// The integrity scan and the scans' merge join read the pair table itself, never its
    /// covering index (which SQLite picks for a WITHOUT ROWID table despite NOT INDEXED
    /// unless the primary key's order is asked for); the index check reads the index.
    @Test func thePairTableIsReadFromTheTable() throws {
        let t = try TempKeychain()
        let store = try #require(t.keychain.store as? SQLiteItemStore)
        #expect(try store.database.queryPlan(SQLiteItemStore.pairTableSQL) == ["SCAN kc_pairs"])
        #expect(try store.database.queryPlan("SELECT seq, fp FROM kc_pairs INDEXED BY kc_pairs_fp") == ["SCAN kc_pairs USING COVERING INDEX kc_pairs_fp"])
    }
}
