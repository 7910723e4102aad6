import KeychainCore
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// The command line's care over Apple's defaults: update, delete and move act on one item
/// unless --all says otherwise.
enum Guard {
    /// Checks that something matches, and only one item unless `all`. - Returns: the count.
    @discardableResult
    static func matches(_ keychain: KeychainSession, query: [String: Any], item: ItemOptions, all: Bool, verb: String) throws -> Int {
        var counting = query
        counting[kSecMatchLimit] = kSecMatchLimitAll
        let count = try keychain.count(counting)
        try check(count, summary: item.summary, path: keychain.path, all: all, verb: verb)
        return count
    }

    /// The items `query` selects, by persistent reference, after the same checks as
    /// `matches`: for kc's own ways of matching (--ignore-case, --contains, --prefix), which
    /// SecItemUpdate and SecItemDelete do not take (they are kSecMatch… keys), and for
    /// `kc move`. Acting on these references acts on exactly the items counted.
    /// - Parameter summary: what was asked for, for messages.
    static func references(_ keychain: KeychainSession, query: [String: Any], summary: String, all: Bool, verb: String) throws -> [Data] {
        var search = query
        search[kSecMatchLimit] = kSecMatchLimitAll
        search[kSecReturnPersistentRef] = true
        let references: [Data]
        do {
            references = try keychain.copyMatching(search) as? [Data] ?? []
        } catch let error as KeychainError where error.status == errSecItemNotFound {
            references = []
        }
        try check(references.count, summary: summary, path: keychain.path, all: all, verb: verb)
        return references
    }

    /// The queries that act on what the command line selected, after the checks of
    /// `matches`: the query itself when its text attributes match exactly (one operation,
    /// an index lookup), else one query per item found (`references`).
    /// - Returns: the number of items matched and the queries to act on.
    static func selection(
        _ keychain: KeychainSession, item: ItemOptions, matching: TextMatching, all: Bool,
        verb: String
    ) throws -> (count: Int, queries: [[String: Any]]) {
        let query = item.query
        if matching.isExact {
            return (try matches(keychain, query: query, item: item, all: all, verb: verb), [query])
        }
        var search = query
        matching.apply(to: &search)
        let found = try references(keychain, query: search, summary: matching.describe(item.summary), all: all, verb: verb)
        return (found.count, found.map { [kSecValuePersistentRef: $0] })
    }

    /// errSecItemNotFound for no match, errSecParam for more than one without `all`.
    private static func check(_ count: Int, summary: String, path: String, all: Bool, verb: String) throws {
        if count == 0 {
            throw KeychainError(
                errSecItemNotFound, "no item matches \(summary) in \(path)",
                hint: "list what is there with `kc list`")
        }
        if count > 1 && !all {
            throw KeychainError(
                errSecParam, "\(count) items match \(summary); kc \(verb) changes one unless --all is given",
                hint: "narrow the query with more attributes, or add --all")
        }
    }
}
