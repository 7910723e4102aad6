#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Keychain {
    /// Imports items in one write transaction, all or none (`docs/import-export.md`).
    ///
    /// An item whose primary key exists (in the keychain, or earlier in `items`) is
    /// `unchanged` when its attributes (dates aside) and secret are the same, else
    /// `skipped`, or replaced with `updateExisting`. Original dates are kept when given.
    ///
    /// - Parameters:
    ///   - dryRun: works out every outcome inside the transaction, then rolls it back.
    ///   - skipInvalid: an item the keychain rejects is reported `invalid` instead of
    ///     failing the import.
    ///   - progress: called with the number of items done, every 1,000 items.
    /// - Returns: one outcome per item, in order.
    ///   - presence: the proof an existing item protected by user presence needs before it
    ///     is compared with (`unchanged` would tell its secret) or replaced.
    /// - Throws: the first invalid item's error, its message starting with the item's
    ///   source; nothing is imported then. `UserPresenceRequired` (see `copyMatching`).
    public func importItems(
        _ items: [ImportItem], updateExisting: Bool = false, dryRun: Bool = false,
        skipInvalid: Bool = false, progress: ((Int) -> Void)? = nil,
        presence: UserPresence = UserPresence()
    ) throws -> [ImportOutcome] {
        try presence.check(on: self)
        do {
            return try store.withBulkCache {
                try write { keys, state in
                    var run = ImportRun(
                        keychain: self, codec: RowCodec(keys: keys), updateExisting: updateExisting,
                        startedEmpty: state.itemCount == 0, presence: presence)
                    var outcomes: [ImportOutcome] = []
                    outcomes.reserveCapacity(items.count)
                    for (index, item) in items.enumerated() {
                        do {
                            outcomes.append(try run.importOne(item, index: index, state: &state))
                        } catch let error as KeychainError {
                            // Only what is wrong with the item itself is skipped; a damaged
                            // file, a full disk or a bug still fails the whole import.
                            guard skipInvalid, Self.itemValidationErrors.contains(error.status) else {
                                throw KeychainError(error.status, "\(item.source): \(error.message)", hint: error.hint)
                            }
                            outcomes.append(.invalid(error))
                        }
                        if (index + 1) % 1000 == 0 { progress?(index + 1) }
                    }
                    // Every protected item met is named, and nothing is written (rolled back).
                    try presence.throwIfDeferred()
                    if dryRun { throw DryRunRollback(outcomes: outcomes) }
                    return outcomes
                }
            }
        } catch let rollback as DryRunRollback {
            return rollback.outcomes
        }
    }
}

extension Keychain {
    /// The statuses that say an item is not valid (as opposed to the keychain or the disk).
    static let itemValidationErrors: [OSStatus] = [errSecParam, errSecNoSuchAttr, errSecDataTooLarge, errSecNoSuchClass, errSecUnimplemented]
}

/// Thrown at the end of a dry run to roll its transaction back with the outcomes.
private struct DryRunRollback: Error {
    let outcomes: [ImportOutcome]
}

/// The state of one import transaction: which primary keys earlier items took.
private struct ImportRun {
    let keychain: Keychain
    let codec: RowCodec
    let updateExisting: Bool
    /// The keychain held no item when the transaction began (it holds the write lock): an
    /// item this import has not added yet cannot exist, and needs no lookup.
    let startedEmpty: Bool
    /// The proof that lets an existing protected item be compared or replaced.
    let presence: UserPresence
    /// Primary-key fingerprint → index of the first item of this import that had it.
    var firstIndex: [[UInt8]: Int] = [:]

    mutating func importOne(_ item: ImportItem, index: Int, state: inout StateRecord) throws -> ImportOutcome {
        var (q, data, attributes) = try Keychain.prepareNew(item.query, created: item.created, modified: item.modified)
        defer { if data != nil { Sodium.wipe(&data!) } }
        let prints = try codec.fingerprints(q.itemClass, attributes)
        let pk = prints.pk
        let earlier = firstIndex[pk]
        if earlier == nil { firstIndex[pk] = index }

        // One index seek, no decryption, for the common case of a new item.
        guard try earlier != nil || (!startedEmpty && exists(pk)), let existing = try find(pk, itemClass: q.itemClass) else {
            try keychain.insertNew(
                itemID: Sodium.randomBytes(16), q.itemClass, attributes, data: data, known: prints,
                keys: codec.keys, state: &state)
            return .created
        }
        // Without a proof, not compared (`unchanged` would tell its secret): named, and the
        // import fails at its end with `UserPresenceRequired`.
        guard try presence.admits(existing, ui: .allow) else { return .skipped(duplicateOf: earlier) }
        if try same(existing, attributes, data) { return .unchanged(duplicateOf: earlier) }
        guard updateExisting else { return .skipped(duplicateOf: earlier) }
        if item.created == nil, let cdat = existing.attributes["cdat"] { attributes["cdat"] = cdat }
        if item.modified == nil, case .date(let old)? = existing.attributes["mdat"], case .date(let mine)? = attributes["mdat"], mine <= old {
            attributes["mdat"] = .date(old + 0.001)
        }
        // Dates are not indexed: the fingerprints computed above still hold.
        try keychain.authority?.admit(attributes)
        var row = try Keychain.seal(
            itemID: existing.row.itemID, q.itemClass, attributes, data: data, known: prints,
            keys: codec.keys, rowVersion: state.generation)
        row.seq = existing.row.seq
        try keychain.store.replace(row)
        try keychain.account(&state, removing: existing.row, adding: row, keys: codec.keys)
        return .updated(duplicateOf: earlier)
    }

    /// Whether a row has this primary-key fingerprint.
    func exists(_ pk: [UInt8]) throws -> Bool {
        var found = false
        try keychain.store.forEachRow(.primaryKey(pk), includeData: false) { _ in
            found = true
            return false
        }
        return found
    }

    /// The item with this primary-key fingerprint, if any.
    func find(_ pk: [UInt8], itemClass: ItemClass) throws -> DecodedItem? {
        var found: DecodedItem?
        try keychain.store.forEachRow(.primaryKey(pk), includeData: true) { row in
            try keychain.checkRow(row, keys: codec.keys)
            let item = try codec.open(row)
            guard item.itemClass == itemClass else { return true }
            found = item
            return false
        }
        return found
    }

    /// Whether an existing item has these attributes (dates aside) and this secret, byte for byte.
    func same(_ existing: DecodedItem, _ attributes: [String: AttributeValue], _ data: [UInt8]?) throws -> Bool {
        let theirs = existing.attributes
        let dated = (theirs["cdat"] != nil ? 1 : 0) + (theirs["mdat"] != nil ? 1 : 0)
        guard attributes.count - 2 == theirs.count - dated else { return false }
        for (key, value) in attributes where key != "cdat" && key != "mdat" {
            guard let other = theirs[key], Self.identical(value, other) else { return false }
        }
        guard let opened = try codec.openData(existing.row) else { return data == nil || data!.isEmpty }
        return opened.withBytes { stored in stored.elementsEqual(data ?? []) }
    }

    /// Same type and the same bytes (strings byte-exact, no Unicode normalisation).
    static func identical(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string, .string), (.data, .data), (.int, .int), (.date, .date), (.map, .map): return a.matches(b, ignoringCase: false)
        default: return false
        }
    }
}
