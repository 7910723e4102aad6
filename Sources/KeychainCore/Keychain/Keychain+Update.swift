#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Keychain {
    /// Changes every item matching `query` (Apple's `SecItemUpdate`): the attributes in
    /// `attributesToUpdate` and, with `kSecValueData`, the secret. Each changed item is
    /// re-sealed under a fresh data key; its modification date is set by kc.
    ///
    ///     try keychain.update([kSecClass: kSecClassGenericPassword, kSecAttrService: "db"],
    ///                         [kSecValueData: Data("new".utf8)])
    ///
    /// - Returns: the number of items changed.
    /// An item whose access-control flags require user presence is changed only with a
    /// proof in `presence` (as Apple asks before re-encrypting it): otherwise its flags
    /// could be dropped and its secret read without one.
    /// - Throws: errSecItemNotFound when nothing matches; errSecDuplicateItem when a change
    ///   would give two items one primary key (then nothing is changed);
    ///   `UserPresenceRequired` (see `copyMatching`).
    @discardableResult
    public func update(_ query: [String: Any], _ attributesToUpdate: [String: Any], presence: UserPresence = UserPresence()) throws -> Int {
        let q = try ItemQuery(query, for: .update)
        if attributesToUpdate[kSecClass] != nil {
            throw KeychainError(errSecNoSuchAttr, "kSecClass cannot be changed by SecItemUpdate")
        }
        if attributesToUpdate[kSecAttrSynchronizable] as? String == kSecAttrSynchronizableAny {
            throw KeychainError(errSecParam, "kSecAttrSynchronizableAny is a query value, not an attribute value")
        }
        let classes: [ItemClass] = q.itemClass == .identity ? [.certificate, .key] : [q.itemClass]
        var changesByClass: [ItemClass: (attributes: [String: AttributeValue], data: [UInt8]?)] = [:]
        for c in classes {
            var attrs: [String: Any] = attributesToUpdate
            if q.itemClass == .identity {
                // An identity update applies what each class has (Apple: cert, then keys).
                attrs = attrs.filter { $0.key == kSecValueData || Schema.attribute($0.key, in: c) != nil }
            }
            changesByClass[c] = try ItemQuery.changes(attrs, itemClass: c)
        }
        defer {
            for c in classes where changesByClass[c]?.data != nil { Sodium.wipe(&changesByClass[c]!.data!) }
        }
        try presence.check(on: self)
        return try write { keys, state in
            let codec = RowCodec(keys: keys)
            var targets: [DecodedItem] = []
            if q.itemClass == .identity {
                var seen = Set<[UInt8]>()
                try forEachIdentity(q, includeData: true, codec: codec) { cert, key in
                    for item in [cert, key] where seen.insert(item.row.itemID).inserted { targets.append(item) }
                    return true
                }
            } else {
                try forEachMatch(q, itemClass: q.itemClass, conditions: q.attributes, includeData: true, codec: codec) { item in
                    targets.append(item)
                    return true
                }
            }
            guard !targets.isEmpty else { throw KeychainError(errSecItemNotFound) }
            for item in targets { _ = try presence.admits(item, ui: q.authenticationUI) }
            try presence.throwIfDeferred()   // every protected target named, nothing written
            let now = Date().timeIntervalSinceReferenceDate
            for item in targets {
                guard let change = changesByClass[item.itemClass] else { continue }
                var attributes = item.attributes
                // Creation and modification dates are the core's (DESIGN.md), never the caller's.
                // A map replaces the whole map; an empty one removes it (docs/format.md §7).
                for (k, v) in change.attributes where k != "mdat" && k != "cdat" { attributes[k] = v.isEmptyMap ? nil : v }
                var mdat = now
                if case .date(let old)? = item.attributes["mdat"], mdat <= old { mdat = old + 0.001 }
                attributes["mdat"] = .date(mdat)
                try authority?.admit(attributes)
                var newRow: ItemRow
                if let newData = change.data {
                    newRow = try newData.withUnsafeBytes {
                        try codec.seal(itemID: item.row.itemID, itemClass: item.itemClass, rowVersion: state.generation, attributes: attributes, data: $0)
                    }
                } else if let opened = try codec.openData(item.row) {
                    newRow = try opened.withBytes {
                        try codec.seal(itemID: item.row.itemID, itemClass: item.itemClass, rowVersion: state.generation, attributes: attributes, data: $0)
                    }
                } else {
                    newRow = try codec.seal(itemID: item.row.itemID, itemClass: item.itemClass, rowVersion: state.generation, attributes: attributes, data: nil)
                }
                newRow.seq = item.row.seq
                do {
                    try store.replace(newRow)
                } catch let error as KeychainError where error.status == errSecDuplicateItem {
                    throw KeychainError(errSecDuplicateItem, "the change would give two items the same primary key; nothing was changed")
                }
                try account(&state, removing: item.row, adding: newRow, keys: keys)
            }
            return targets.count
        }
    }
}
