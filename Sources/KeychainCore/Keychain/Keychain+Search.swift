/// Finding items: the planner picks candidate rows by blind index, then every candidate's
/// metadata is decrypted, checked against its row and re-matched on plaintext
/// (`docs/format.md` §7). An index only narrows the candidates; it never decides a match.
extension Keychain {
    /// Chooses how to find candidates: the primary-key index when every key attribute is
    /// given (and, for a generic password, the query asks for items without a Secret Service
    /// map), else the pair indexes of the map's pairs with the exact indexes given, else the
    /// exact indexes given, else a scan of the class.
    func plan(_ query: ItemQuery, itemClass: ItemClass, conditions: [String: AttributeValue], codec: RowCodec) throws -> RowLookup {
        if let id = query.persistentItemID { return .itemID(id) }
        var effective = conditions
        switch query.sync {
        case .notSynchronizable: effective["sync"] = .int(0)
        case .synchronizable: effective["sync"] = .int(1)
        case .any: break
        }
        let pkKeys = Schema.primaryKey(itemClass)
        let exactUsable: (String) -> Bool = { key in
            // Ignore-case, prefix and substring matching cannot use an exact fingerprint of
            // a string value.
            guard effective[key] != nil else { return false }
            if query.caseInsensitive || query.textMatch != .exact, Schema.isText(key) { return false }
            return true
        }
        // A query without a map matches items with any map, and a non-empty one is a subset
        // rule: only "no map" ([:]) pins the part of the primary key a map adds.
        let optionalKeysPinned = Schema.optionalPrimaryKey(itemClass).allSatisfy { effective[$0]?.isEmptyMap == true }
        if optionalKeysPinned, pkKeys.allSatisfy(exactUsable) {
            return .primaryKey(try codec.fingerprints(itemClass, effective).pk)
        }
        var indexed: [(IndexColumn, [UInt8])] = []
        for (column, key) in Schema.indexColumns(itemClass) where exactUsable(key) {
            if let v = effective[key] {
                indexed.append((column, try codec.fingerprint(v, column: column, itemClass: itemClass)))
            }
        }
        if let attribute = Schema.pairAttribute(itemClass), case .map(let map)? = effective[attribute], !map.isEmpty {
            return .pairs(try codec.pairFingerprints(map, itemClass: itemClass), indexes: indexed)
        }
        return indexed.isEmpty ? .scan(classCode: itemClass.code) : .indexes(indexed)
    }

    /// Calls `body` with each item of `itemClass` matching `conditions`, in insertion
    /// order, until it returns false; with `after`, only those after that place (`seq`).
    func forEachMatch(
        _ query: ItemQuery, itemClass: ItemClass, conditions: [String: AttributeValue],
        includeData: Bool, codec: RowCodec, after: Int64? = nil, _ body: (DecodedItem) throws -> Bool
    ) throws {
        let lookup = try plan(query, itemClass: itemClass, conditions: conditions, codec: codec)
        try store.forEachRow(lookup, after: after ?? Int64.min, includeData: includeData) { row in
            try checkRow(row, keys: codec.keys)
            let item = try codec.open(row)
            guard item.itemClass == itemClass, Self.matches(item, conditions: conditions, query: query) else { return true }
            return try body(item)
        }
    }

    /// The plaintext re-check of every condition (byte-exact; ignore-case, prefix or
    /// substring on request).
    static func matches(_ item: DecodedItem, conditions: [String: AttributeValue], query: ItemQuery) -> Bool {
        let sync = item.attributes["sync"] ?? .int(0)
        switch query.sync {
        case .notSynchronizable: if sync != .int(0) { return false }
        case .synchronizable: if sync != .int(1) { return false }
        case .any: break
        }
        for (key, wanted) in conditions {
            // A map in a query: the item's map holds every pair given; [:] means no map.
            if case .map(let pairs) = wanted {
                guard case .map(let have)? = item.attributes[key] else {
                    if pairs.isEmpty { continue }
                    return false
                }
                guard pairs.isEmpty ? have.isEmpty : have.contains(pairs) else { return false }
                continue
            }
            // Ignore-case, prefix and substring apply to text attributes only, never to
            // binary ones (issuer, labels…).
            let text = Schema.isText(key)
            let fold = query.caseInsensitive && text
            guard let have = item.attributes[key],
                have.matches(wanted, ignoringCase: fold, textMatch: text ? query.textMatch : .exact)
            else { return false }
        }
        return true
    }

    /// Splits an identity query into its certificate and key conditions (Apple's join:
    /// label, issuer, serial and subject key id are the certificate's; the rest the key's).
    static func identityConditions(_ attributes: [String: AttributeValue]) -> (certificate: [String: AttributeValue], key: [String: AttributeValue]) {
        var cert: [String: AttributeValue] = [:], key: [String: AttributeValue] = [:]
        let certFirst: Set<String> = ["labl", "issr", "slnr", "skid"]
        for (k, v) in attributes {
            let inCert = Schema.attribute(k, in: .certificate) != nil
            let inKey = Schema.attribute(k, in: .key) != nil
            if inCert && (!inKey || certFirst.contains(k)) { cert[k] = v } else { key[k] = v }
        }
        return (cert, key)
    }

    /// Calls `body` with each (certificate, key) pair whose public-key hash equals the
    /// key's application label, both matching their conditions.
    func forEachIdentity(
        _ query: ItemQuery, includeData: Bool, codec: RowCodec,
        _ body: (DecodedItem, DecodedItem) throws -> Bool
    ) throws {
        let (certConditions, keyConditions) = Self.identityConditions(query.attributes)
        // Collect first: a nested lookup may reuse the same cached statement.
        var certificates: [DecodedItem] = []
        try forEachMatch(query, itemClass: .certificate, conditions: certConditions, includeData: includeData, codec: codec) { cert in
            if cert.attributes["pkhh"] != nil { certificates.append(cert) }
            return true
        }
        var keyQuery = query
        keyQuery.persistentItemID = nil
        for cert in certificates {
            var conditions = keyConditions
            conditions["klbl"] = cert.attributes["pkhh"]
            var keys: [DecodedItem] = []
            try forEachMatch(keyQuery, itemClass: .key, conditions: conditions, includeData: includeData, codec: codec) { key in
                keys.append(key)
                return true
            }
            for key in keys {
                guard try body(cert, key) else { return }
            }
        }
    }
}
