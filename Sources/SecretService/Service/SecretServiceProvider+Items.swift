import KeychainCore
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An item object: a keychain item by its persistent reference, or the placeholder of a
/// search that met a locked keychain.
struct ItemHandle {
    var collection: KeychainCollections.Collection
    /// The persistent reference; nil for a placeholder.
    var ref: [UInt8]?
    /// The placeholder's id (`locked-N`); nil for an item.
    var placeholder: String?
}

/// The org.freedesktop.Secret.Collection and org.freedesktop.Secret.Item interfaces.
extension SecretServiceProvider {
    static let labelProperty = "org.freedesktop.Secret.Item.Label"
    static let attributesProperty = "org.freedesktop.Secret.Item.Attributes"

    /// The item at `collectionID/id`. A placeholder whose keychain has been unlocked since
    /// stands for the first item its search finds now (clients such as libsecret's search
    /// keep using the paths SearchItems gave them after unlocking). - Throws: NoSuchObject.
    func item(_ collectionID: String, _ id: String) throws(BusError) -> ItemHandle {
        let collection = try collection(collectionID)
        if let search = lockedSearches[id] {
            if store.heldPaths().contains(collection.path),
                let first = try orderedMatches(collection, search.attributes).first?.ref
            {
                return ItemHandle(collection: collection, ref: first, placeholder: nil)
            }
            return ItemHandle(collection: collection, ref: nil, placeholder: id)
        }
        guard let ref = ObjectPath.bytes(fromHex: id) else { throw .noSuchObject("no item \(id)") }
        return ItemHandle(collection: collection, ref: ref, placeholder: nil)
    }

    func collectionMethod(_ call: BusCall, _ collection: KeychainCollections.Collection) throws(BusError) -> [BusValue] {
        let a = call.arguments
        switch (call.member, a.count) {
        case ("SearchItems", 1):
            guard let attributes = a[0].stringMap else { throw .invalidArgs("SearchItems takes (a{ss} attributes)") }
            return [.objectPaths(try search(collection, attributes, held: store.heldPaths()))]
        case ("CreateItem", 3):
            guard let properties = a[0].propertyMap, let replace = a[2].boolean else {
                throw .invalidArgs("CreateItem takes (a{sv} properties, (oayays) secret, b replace)")
            }
            return try createItem(in: collection, properties, secret: a[1], replace: replace, caller: call.sender)
        case ("Delete", 0):
            throw .notSupported("kc does not delete keychains over D-Bus; remove \(collection.path) yourself")
        default:
            throw .unknownMethod("Collection has no method \(call.member) taking \(a.count) arguments")
        }
    }

    private func createItem(
        in collection: KeychainCollections.Collection, _ properties: [String: BusValue], secret: BusValue,
        replace: Bool, caller: String
    ) throws(BusError) -> [BusValue] {
        guard case .structure(let fields) = secret, fields.count == 4, let sessionPath = fields[0].objectPath else {
            throw .invalidArgs("a secret is (o session, ay parameters, ay value, s content_type)")
        }
        let session = try session(sessionPath, for: caller)
        var attributes: [String: String] = [:]
        if let given = properties[Self.attributesProperty] {
            guard let map = given.stringMap else { throw .invalidArgs("\(Self.attributesProperty) is a{ss}") }
            attributes = map
        }
        guard attributes[ItemMapping.copyMark] == nil else {
            throw .invalidArgs("the attribute \(ItemMapping.copyMark) is kc's own (it tells apart items whose attributes are the same)")
        }
        let label = properties[Self.labelProperty]?.string ?? ""
        var (bytes, contentType) = try session.unwrap(secret)
        defer { Sodium.wipe(&bytes) }
        // Only `replace` replaces: without it, an item whose attributes are those of another
        // is a second item (the specification's model; gnome-keyring's and KeePassXC's too).
        if replace, let existing = try exactMatch(collection, attributes) {
            _ = try store.with(collection.path) { keychain in
                try keychain.update(
                    SecretStore.itemQuery(existing),
                    [
                        kSecAttrLabel: label, kSecValueData: Data(bytes),
                        ItemMapping.contentTypeKey: contentType == "text/plain" ? "" : contentType
                    ])
            }
            bus.signal(path(of: collection), Self.collectionInterface, "ItemChanged", [.objectPath(path(of: existing, in: collection))])
            return [.objectPath(path(of: existing, in: collection)), .objectPath(ObjectPath.none)]
        }
        let ref = try store.with(collection.path) { keychain -> [UInt8] in
            // The attributes as they are; when an item has them already (the keychain's
            // primary key), with `copyMark` besides, so that the two stay apart.
            var copy: String? = nil
            while true {
                var query = ItemMapping.keychainAttributes(attributes, label: label, contentType: contentType, copy: copy)
                query[kSecClass] = kSecClassGenericPassword
                query[kSecValueData] = Data(bytes)
                query[kSecReturnPersistentRef] = true
                do {
                    guard let made = try keychain.add(query) as? Data else {
                        throw KeychainError(errSecInternalError, "the new item has no reference")
                    }
                    return Array(made)
                } catch let error as KeychainError where error.status == errSecDuplicateItem && copy == nil {
                    copy = ItemMapping.newCopyValue()
                }
            }
        }
        bus.signal(path(of: collection), Self.collectionInterface, "ItemCreated", [.objectPath(path(of: ref, in: collection))])
        return [.objectPath(path(of: ref, in: collection)), .objectPath(ObjectPath.none)]
    }

    /// The item CreateItem with `replace` replaces: the oldest whose attributes are exactly
    /// `attributes` (`copyMark` is not an attribute the client gave), else the oldest plain
    /// kc item that answers to them; the first a search for them returns.
    private func exactMatch(_ collection: KeychainCollections.Collection, _ attributes: [String: String]) throws(BusError) -> [UInt8]? {
        let found: [(ref: [UInt8], attributes: [String: Any])]
        if attributes.isEmpty {
            // No attributes: the items kept without service, account or map.
            found = try store.search(
                collection.path,
                ItemMapping.searchQueries([:]).map { query in
                    query.merging([kSecAttrService: "", kSecAttrAccount: ""]) { _, empty in empty }
                })
        } else {
            found = try store.search(collection.path, ItemMapping.searchQueries(attributes))
        }
        // An item whose own attributes are these comes before a plain kc item that answers
        // to them; the oldest first within each (`ItemMapping.ordered`, as searches order).
        return ItemMapping.ordered(found, for: attributes).first { ItemMapping.rank($0.attributes, for: attributes) < 2 }?.ref
    }

    func itemMethod(_ call: BusCall, _ handle: ItemHandle) throws(BusError) -> [BusValue] {
        let a = call.arguments
        guard let ref = handle.ref else {
            throw .isLocked("this stands for the items of a search in a locked collection: Unlock it")
        }
        let keychain = handle.collection.path
        switch (call.member, a.count) {
        case ("GetSecret", 1):
            guard let sessionPath = a[0].objectPath else { throw .invalidArgs("GetSecret takes (o session)") }
            let session = try session(sessionPath, for: call.sender)
            var item = try store.secretAndAttributes(keychain, ref: ref)
            defer { Sodium.wipe(&item.secret) }
            let contentType = ItemMapping.text(item.attributes[ItemMapping.contentTypeKey]).flatMap { $0.isEmpty ? nil : $0 }
            return [try session.wrap(item.secret, contentType: contentType ?? "text/plain")]
        case ("SetSecret", 1):
            guard case .structure(let fields) = a[0], fields.count == 4, let sessionPath = fields[0].objectPath else {
                throw .invalidArgs("SetSecret takes ((oayays) secret)")
            }
            let session = try session(sessionPath, for: call.sender)
            var (bytes, contentType) = try session.unwrap(a[0])
            defer { Sodium.wipe(&bytes) }
            try store.with(keychain) { keychain in
                try keychain.update(
                    SecretStore.itemQuery(ref),
                    [
                        kSecValueData: Data(bytes),
                        ItemMapping.contentTypeKey: contentType == "text/plain" ? "" : contentType
                    ])
            }
            bus.signal(path(of: handle.collection), Self.collectionInterface, "ItemChanged", [.objectPath(call.path)])
            return []
        case ("Delete", 0):
            try store.with(keychain) { keychain in try keychain.delete(SecretStore.itemQuery(ref)) }
            bus.signal(path(of: handle.collection), Self.collectionInterface, "ItemDeleted", [.objectPath(call.path)])
            return [.objectPath(ObjectPath.none)]
        default:
            throw .unknownMethod("Item has no method \(call.member) taking \(a.count) arguments")
        }
    }

    /// Sets an item's attributes (re-mapped onto service, account and the map) or label.
    func setItemProperty(_ handle: ItemHandle, _ name: String, _ value: BusValue) throws(BusError) {
        guard let ref = handle.ref else { throw .isLocked("unlock the collection first") }
        let change: [String: Any]
        switch name {
        case "Label":
            guard let label = value.string else { throw .invalidArgs("Label is a string") }
            change = [kSecAttrLabel: label]
        case "Attributes":
            guard let map = value.stringMap else { throw .invalidArgs("Attributes is a{ss}") }
            guard map[ItemMapping.copyMark] == nil else {
                throw .invalidArgs("the attribute \(ItemMapping.copyMark) is kc's own (it tells apart items whose attributes are the same)")
            }
            _ = try store.with(handle.collection.path) { keychain -> Int in
                // As CreateItem: another item with these attributes stays another item.
                var copy: String? = nil
                while true {
                    var change = ItemMapping.keychainAttributes(map, label: "", contentType: nil, copy: copy)
                    change[kSecAttrLabel] = nil
                    if change[ItemMapping.mapKey] == nil { change[ItemMapping.mapKey] = [String: String]() }
                    do {
                        return try keychain.update(SecretStore.itemQuery(ref), change)
                    } catch let error as KeychainError where error.status == errSecDuplicateItem && copy == nil {
                        copy = ItemMapping.newCopyValue()
                    }
                }
            }
            bus.signal(
                path(of: handle.collection), Self.collectionInterface, "ItemChanged",
                [.objectPath(path(of: ref, in: handle.collection))])
            return
        default:
            throw .propertyReadOnly("\(name) cannot be set")
        }
        try store.with(handle.collection.path) { keychain in try keychain.update(SecretStore.itemQuery(ref), change) }
        bus.signal(
            path(of: handle.collection), Self.collectionInterface, "ItemChanged",
            [.objectPath(path(of: ref, in: handle.collection))])
    }

    /// Seconds since 1970 of a date attribute (0 when absent).
    static func seconds(_ value: Any?) -> UInt64 {
        guard let date = value as? Date else { return 0 }
        return UInt64(max(0, date.timeIntervalSince1970))
    }
}
