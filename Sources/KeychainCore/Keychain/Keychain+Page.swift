extension Keychain {
    /// One page of a search: the items matching `query` (as `copyMatching` with
    /// `kSecMatchLimitAll` finds them, in insertion order) that come after the place
    /// `after`, at most `limit` of them and, past the first, no more than `maxBytes` of
    /// results (`SearchPage.encodedSize`). A listing of any size goes page by page, each
    /// page starting where the last stopped (the store seeks to it: no row before it is
    /// read again), so neither side ever holds more than one page.
    ///
    /// Pages carry attributes and persistent references, never secrets (so no page needs
    /// a proof of user presence); `kSecMatchLimit` is ignored; identities, a join, are not
    /// paged.
    /// - Parameter after: `SearchPage.next` of the previous page; nil for the first.
    /// - Throws: errSecParam for `kSecReturnData`, an identity, or a limit below 1.
    public func copyPage(_ query: [String: Any], after: Int64?, limit: Int, maxBytes: Int = SearchPage.maxBytes) throws -> SearchPage {
        let q = try ItemQuery(query, for: .copyMatching)
        guard !q.returnData else { throw KeychainError(errSecParam, "a page of a search carries no secrets (kSecReturnData)") }
        guard q.itemClass != .identity else { throw KeychainError(errSecParam, "a search for identities is not paged") }
        guard limit >= 1 else { throw KeychainError(errSecParam, "a page holds at least one item") }
        var items: [Any] = []
        var next: Int64?
        try read { keys, _ in
            // From nothing: a team keychain's read may run this twice.
            items = []
            next = nil
            var bytes = 0
            var last = after ?? Int64.min
            try forEachMatch(q, itemClass: q.itemClass, conditions: q.attributes, includeData: false, codec: RowCodec(keys: keys), after: after) { item in
                if items.count >= limit || bytes >= maxBytes {
                    // A match beyond this page: the next one starts after the last one here.
                    next = last
                    return false
                }
                if let value = Results.item(item.attributes, persistentRef: item.persistentRef, data: nil, query: q) {
                    items.append(value)
                    bytes += SearchPage.encodedSize(value)
                } else {
                    items.append(true)   // nothing asked for: the match is counted
                }
                last = item.row.seq
                return true
            }
        }
        return SearchPage(items: items, next: next)
    }
}
