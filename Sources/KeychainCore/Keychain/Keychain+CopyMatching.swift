extension Keychain {
    /// Finds items (Apple's `SecItemCopyMatching`). Returns one item unless
    /// `kSecMatchLimit` asks for more; the kSecReturn… keys choose what comes back.
    ///
    ///     let secret = try keychain.copyMatching([kSecClass: kSecClassGenericPassword,
    ///                                             kSecAttrService: "db", kSecReturnData: true]) as? Data
    ///
    /// - Returns: a single value for limit one; an array otherwise (empty when nothing
    ///   was asked for); nil when limit one and nothing was asked for.
    /// An item whose access-control flags require user presence gives its secret only with
    /// a proof in `presence`; without one the call throws `UserPresenceRequired`, or, as
    /// `kSecUseAuthenticationUI` says, fails with errSecInteractionNotAllowed (Fail) or
    /// leaves the item out (Skip). Its attributes need no proof, as on Apple platforms.
    /// - Throws: errSecItemNotFound when nothing matches (never an empty array);
    ///   errSecDecode when a row fails its integrity checks; errSecAuthFailed when the
    ///   proof is the wrong password.
    public func copyMatching(_ query: [String: Any], presence: UserPresence = UserPresence()) throws -> Any? {
        let q = try ItemQuery(query, for: .copyMatching)
        if q.limit == .count(0) { throw KeychainError(errSecItemNotFound) }
        try presence.check(on: self)
        let maximum = q.limit.maximum
        var results: [Any] = []
        var found = 0
        // Copies (a Secret Service map with `AttributeMap.copyMark`) come after every item
        // without it: `kc find`, `kc run` and the first of a search never prefer the item a
        // client's second CreateItem (or Set Attributes) made over the one it copies.
        var copies: [Any] = []
        var copiesFound = 0
        try read { keys, _ in
            // From nothing: a team keychain's read may run this twice.
            results = []
            found = 0
            copies = []
            copiesFound = 0
            presence.forgetDeferred()
            let codec = RowCodec(keys: keys)
            let collect: (Any?) -> Bool = { value in
                found += 1
                if let value { results.append(value) }
                return maximum.map { found + presence.deferredCount < $0 } ?? true
            }
            let collectCopy: (Any?) -> Bool = { value in
                // Kept only up to the limit; the search goes on for items without the mark.
                if maximum.map({ copiesFound < $0 }) ?? true {
                    copiesFound += 1
                    if let value { copies.append(value) }
                }
                return true
            }
            // A protected item left out for want of a proof counts against the limit as if
            // found: the search stops where it would have, having named what it would release.
            let deferredAll: () -> Bool = { maximum.map { found + presence.deferredCount < $0 } ?? true }
            if q.itemClass == .identity {
                try forEachIdentity(q, includeData: q.returnData, codec: codec) { cert, key in
                    if q.returnData, try !presence.admits(key, ui: q.authenticationUI) { return deferredAll() }
                    var merged = key.attributes
                    for (k, v) in cert.attributes { merged[k] = v }
                    let data = q.returnData ? try codec.openDataCopy(key.row) : nil
                    var value = Results.item(merged, persistentRef: Array("idnt".utf8) + cert.row.itemID, data: data, query: q)
                    if var dict = value as? [String: Any], q.returnData, let certData = try codec.openDataCopy(cert.row) {
                        dict["certdata"] = certData
                        value = dict
                    }
                    return collect(value)
                }
            } else {
                try forEachMatch(q, itemClass: q.itemClass, conditions: q.attributes, includeData: q.returnData, codec: codec) { item in
                    if q.returnData, try !presence.admits(item, ui: q.authenticationUI) { return deferredAll() }
                    let data = q.returnData ? try codec.openDataCopy(item.row) : nil
                    let value = Results.item(item.attributes, persistentRef: item.persistentRef, data: data, query: q)
                    if case .map(let map)? = item.attributes[kcAttrSecretServiceAttributes], map.isCopy { return collectCopy(value) }
                    return collect(value)
                }
            }
            let room = maximum.map { max(0, $0 - found - presence.deferredCount) } ?? copiesFound
            results += copies.prefix(room)
            found += min(room, copiesFound)
        }
        try presence.throwIfDeferred()
        guard found > 0 else { throw KeychainError(errSecItemNotFound) }
        if q.limit.isArray { return results }
        return results.first
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
