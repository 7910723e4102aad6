import Foundation
import Testing
@testable import KeychainCore

/// `Keychain.copyPage`: a search page by page (the agent's `copyPage`, docs/protocol.md)
/// gives every match once, in insertion order, whichever lookup the planner picks, and
/// stops a page at its item or byte limit.
@Suite struct CopyPageTests {
    static let map = kcAttrSecretServiceAttributes

    /// 120 items: every third a plain item, the others with a Secret Service map whose
    /// `parity` pair is shared by half of them.
    static func filled() throws -> TempKeychain {
        let t = try TempKeychain()
        try t.keychain.addAll(
            (0..<120).lazy.map { i -> [String: Any] in
                var q: [String: Any] = [
                    kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i % 7)", kSecAttrAccount: "acct-\(i)",
                    kSecValueData: Data("pw-\(i)".utf8)
                ]
                if i % 3 != 0 { q[map] = ["app": "bench", "parity": String(i % 2), "n": String(i)] }
                return q
            })
        return t
    }

    /// Every page of `query` (limit `limit`), and the places they gave.
    static func pages(_ keychain: Keychain, _ query: [String: Any], limit: Int, maxBytes: Int = SearchPage.maxBytes) throws -> [[String]] {
        var out: [[String]] = []
        var after: Int64?
        repeat {
            let page = try keychain.copyPage(query, after: after, limit: limit, maxBytes: maxBytes)
            #expect(page.items.count <= limit)
            if let next = page.next { #expect(next > (after ?? .min) && !page.items.isEmpty) }
            out.append(page.items.compactMap { ($0 as? [String: Any])?[kSecAttrAccount] as? String })
            after = page.next
        } while after != nil
        return out
    }

    /// The accounts `copyMatching` finds for `query`, in its order.
    static func all(_ keychain: Keychain, _ query: [String: Any]) throws -> [String] {
        var q = query
        q[kSecMatchLimit] = kSecMatchLimitAll
        return ((try? keychain.copyMatching(q)) as? [[String: Any]] ?? []).compactMap { $0[kSecAttrAccount] as? String }
    }

    @Test(arguments: [1, 7, 50, 1000])
    func pagesGiveEveryMatchOnceInOrder(limit: Int) throws {
        let t = try Self.filled()
        let base: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecReturnAttributes: true]
        // A scan, an index lookup, a pair lookup, and a pair lookup with an index.
        var byService = base
        byService[kSecAttrService] = "svc-3"
        var byPair = base
        byPair[Self.map] = ["parity": "1"]
        var both = byPair
        both[kSecAttrService] = "svc-2"
        for query in [base, byService, byPair, both] {
            let expected = try Self.all(t.keychain, query)
            #expect(!expected.isEmpty)
            let pages = try Self.pages(t.keychain, query, limit: limit)
            #expect(pages.flatMap { $0 } == expected, "limit \(limit), \(query)")
            #expect(pages.count == max(1, (expected.count + limit - 1) / limit), "full pages but the last")
        }
        // Nothing matches: one empty page, the last.
        var none = base
        none[kSecAttrService] = "nothing"
        #expect(try Self.pages(t.keychain, none, limit: limit) == [[]])
    }

    /// A page also stops once its results pass the byte limit, after one item at least,
    /// and items added or deleted between pages neither repeat nor hide the others.
    @Test func pagesStopAtTheirBytesAndSurviveChangesBetweenThem() throws {
        let t = try Self.filled()
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecReturnAttributes: true]
        let expected = try Self.all(t.keychain, query)
        let tiny = try Self.pages(t.keychain, query, limit: 1000, maxBytes: 1)
        #expect(tiny.count == expected.count && tiny.allSatisfy { $0.count == 1 })
        #expect(tiny.flatMap { $0 } == expected)

        let first = try t.keychain.copyPage(query, after: nil, limit: 40)
        let next = try #require(first.next)
        try t.keychain.delete([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "acct-10"])   // on the first page
        try t.keychain.delete([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "acct-100"])   // on a later one
        try t.keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "late", kSecAttrAccount: "acct-late"])
        var rest: [String] = []
        var after: Int64? = next
        while let place = after {
            let page = try t.keychain.copyPage(query, after: place, limit: 40)
            rest += page.items.compactMap { ($0 as? [String: Any])?[kSecAttrAccount] as? String }
            after = page.next
        }
        #expect(rest == Array(expected[40...]).filter { $0 != "acct-100" } + ["acct-late"])
    }

    @Test func pagesCarryNoSecretsAndNoIdentities() throws {
        let t = try Self.filled()
        for query: [String: Any] in [
            [kSecClass: kSecClassGenericPassword, kSecReturnData: true],
            [kSecClass: kSecClassIdentity, kSecReturnAttributes: true]
        ] {
            let error = #expect(throws: KeychainError.self) { try t.keychain.copyPage(query, after: nil, limit: 10) }
            #expect(error?.status == errSecParam)
        }
        let error = #expect(throws: KeychainError.self) { try t.keychain.copyPage([kSecClass: kSecClassGenericPassword], after: nil, limit: 0) }
        #expect(error?.status == errSecParam)
    }

    /// A page seeks to its place: SQLite's plans for a scan, its pair cursor and a pair
    /// lookup start at `seq > ?` by a search, never reading the rows of earlier pages.
    @Test func aPageSeeksToItsPlace() throws {
        let t = try TempKeychain()
        let store = try #require(t.keychain.store as? SQLiteItemStore)
        let scan = try store.database.queryPlan(SQLiteItemStore.scanSQL(columns: "seq"))
        #expect(scan == ["SEARCH kc_items USING INTEGER PRIMARY KEY (rowid>?)"], "\(scan)")
        let pairs = try store.database.queryPlan(SQLiteItemStore.pairTableAfterSQL)
        #expect(pairs == ["SEARCH kc_pairs USING PRIMARY KEY (seq>?)"], "\(pairs)")
        let lookup = try store.database.queryPlan(SQLiteItemStore.pairLookupSQL(columns: "kc_items.seq", pairs: 1, conditions: []))
        #expect(lookup.first?.contains("(fp=? AND seq>?)") == true, "\(lookup)")
    }
}
