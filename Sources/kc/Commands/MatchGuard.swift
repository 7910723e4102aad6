import KeychainCore
import KeychainClient

/// The command line's care over Apple's defaults: update and delete act on one item
/// unless --all says otherwise.
enum Guard {
    /// Checks that something matches, and only one item unless `all`. - Returns: the count.
    @discardableResult
    static func matches(_ keychain: KeychainSession, query: [String: Any], item: ItemOptions, all: Bool, verb: String) throws -> Int {
        var counting = query
        counting[kSecMatchLimit] = kSecMatchLimitAll
        let count = try keychain.count(counting)
        if count == 0 {
            throw KeychainError(errSecItemNotFound, "no item matches \(item.summary) in \(keychain.path)",
                                hint: "list what is there with `kc find --all`")
        }
        if count > 1 && !all {
            throw KeychainError(errSecParam, "\(count) items match \(item.summary); kc \(verb) changes one unless --all is given",
                                hint: "narrow the query with more attributes, or add --all")
        }
        return count
    }
}
