extension Keychain {
    /// Finds items (Apple's `SecItemCopyMatching`). Returns one item unless
    /// `kSecMatchLimit` asks for more; the kSecReturn… keys choose what comes back.
    ///
    ///     let secret = try keychain.copyMatching([kSecClass: kSecClassGenericPassword,
    ///                                             kSecAttrService: "db", kSecReturnData: true]) as? Data
    ///
    /// - Returns: a single value for limit one; an array otherwise (empty when nothing
    ///   was asked for); nil when limit one and nothing was asked for.
    /// - Throws: errSecItemNotFound when nothing matches (never an empty array);
    ///   errSecDecode when a row fails its integrity checks.
    public func copyMatching(_ query: [String: Any]) throws -> Any? {
        let q = try ItemQuery(query, for: .copyMatching)
        if q.limit == .count(0) { throw KeychainError(errSecItemNotFound) }
        let maximum = q.limit.maximum
        var results: [Any] = []
        var found = 0
        try read { keys, _ in
            let codec = RowCodec(keys: keys)
            let collect: (Any?) -> Bool = { value in
                found += 1
                if let value { results.append(value) }
                return maximum.map { found < $0 } ?? true
            }
            if q.itemClass == .identity {
                try forEachIdentity(q, includeData: q.returnData, codec: codec) { cert, key in
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
                    let data = q.returnData ? try codec.openDataCopy(item.row) : nil
                    return collect(Results.item(item.attributes, persistentRef: item.persistentRef, data: data, query: q))
                }
            }
        }
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
