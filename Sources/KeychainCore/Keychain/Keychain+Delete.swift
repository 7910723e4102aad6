extension Keychain {
    /// Deletes every item matching `query` (Apple's `SecItemDelete`); for an identity,
    /// its certificate and its key.
    ///
    ///     try keychain.delete([kSecClass: kSecClassGenericPassword, kSecAttrService: "db"])
    ///
    /// - Returns: the number of items deleted.
    /// - Throws: errSecItemNotFound when nothing matches.
    @discardableResult
    public func delete(_ query: [String: Any]) throws -> Int {
        let q = try ItemQuery(query, for: .delete)
        return try write { keys, state in
            let codec = RowCodec(keys: keys)
            var targets: [ItemRow] = []
            if q.itemClass == .identity {
                var seen = Set<[UInt8]>()
                // With their data: the accumulator term covers every column.
                try forEachIdentity(q, includeData: true, codec: codec) { cert, key in
                    for item in [cert, key] where seen.insert(item.row.itemID).inserted { targets.append(item.row) }
                    return true
                }
            } else {
                try forEachMatch(q, itemClass: q.itemClass, conditions: q.attributes, includeData: true, codec: codec) { item in
                    targets.append(item.row)
                    return true
                }
            }
            guard !targets.isEmpty else { throw KeychainError(errSecItemNotFound) }
            for row in targets {
                guard state.itemCount > 0 else {
                    throw KeychainError(
                        errSecDecode, "\(path) holds more rows than its header counts: rows were put back",
                        hint: "restore the keychain from a backup")
                }
                try store.delete(itemID: row.itemID)
                try account(&state, removing: row, adding: nil, keys: keys)
                state.itemCount -= 1
            }
            return targets.count
        }
    }

    /// Counts the items matching a search query without decrypting any secret (for the
    /// command line's "matched N items" checks).
    public func count(_ query: [String: Any]) throws -> Int {
        var q = try ItemQuery(query, for: .copyMatching)
        q.returnData = false
        var found = 0
        try read { keys, _ in
            found = 0   // from nothing: a team keychain's read may run this twice
            let codec = RowCodec(keys: keys)
            if q.itemClass == .identity {
                try forEachIdentity(q, includeData: false, codec: codec) { _, _ in
                    found += 1; return true
                }
            } else {
                try forEachMatch(q, itemClass: q.itemClass, conditions: q.attributes, includeData: false, codec: codec) { _ in
                    found += 1
                    return true
                }
            }
        }
        return found
    }
}
