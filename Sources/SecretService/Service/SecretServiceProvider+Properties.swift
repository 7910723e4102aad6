import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// org.freedesktop.DBus.Properties on every object.
extension SecretServiceProvider {
    func properties(_ call: BusCall, _ target: ObjectPath) throws(BusError) -> [BusValue] {
        let a = call.arguments
        switch (call.member, a.count) {
        case ("Get", 2):
            guard let interface = a[0].string, let name = a[1].string else { throw .invalidArgs("Get takes (s interface, s name)") }
            let all = try propertyValues(target, interface: interface)
            guard let value = all.first(where: { $0.0 == name })?.1 else {
                throw .unknownProperty("\(interface) has no property \(name)")
            }
            return [.variant(value)]
        case ("GetAll", 1):
            guard let interface = a[0].string else { throw .invalidArgs("GetAll takes (s interface)") }
            return [.properties(try propertyValues(target, interface: interface))]
        case ("Set", 3):
            guard let interface = a[0].string, let name = a[1].string else { throw .invalidArgs("Set takes (s interface, s name, v value)") }
            let value = a[2].unwrapped
            switch target {
            case .item(let collectionID, let id) where interface == Self.itemInterface:
                try setItemProperty(try item(collectionID, id), name, value)
                return []
            case .collection(let id) where interface == Self.collectionInterface && name == "Label":
                try setCollectionLabel(try collection(id), value)
                return []
            case .alias(let alias) where interface == Self.collectionInterface && name == "Label":
                guard let found = collections.alias(alias) else { throw .noSuchObject("no collection has the alias \(alias)") }
                try setCollectionLabel(found, value)
                return []
            default:
                throw .propertyReadOnly("\(interface).\(name) cannot be set")
            }
        default:
            throw .unknownMethod("Properties has no method \(call.member) taking \(a.count) arguments")
        }
    }

    /// Sets a collection's label (read-write in the specification; kept by `CollectionLabels`).
    private func setCollectionLabel(_ collection: KeychainCollections.Collection, _ value: BusValue) throws(BusError) {
        guard let label = value.string else { throw .invalidArgs("Label is a string") }
        try CollectionLabels.set(label, of: collection)
        bus.signal(ObjectPath.root, Self.serviceInterface, "CollectionChanged", [.objectPath(path(of: collection))])
    }

    /// The properties of `target` under `interface` (an empty interface name means its own).
    private func propertyValues(_ target: ObjectPath, interface: String) throws(BusError) -> [(String, BusValue)] {
        switch target {
        case .service:
            guard interface.isEmpty || interface == Self.serviceInterface else { return [] }
            collections.refresh()
            return [("Collections", .objectPaths(collections.all.map { path(of: $0) }))]
        case .collection, .alias:
            guard interface.isEmpty || interface == Self.collectionInterface else { return [] }
            let collection: KeychainCollections.Collection
            if case .alias(let name) = target {
                guard let found = collections.alias(name) else { throw .noSuchObject("no collection has the alias \(name)") }
                collection = found
            } else if case .collection(let id) = target {
                collection = try self.collection(id)
            } else {
                return []
            }
            let held = store.heldPaths().contains(collection.path)
            var items: [String] = []
            if held {
                items = try store.search(collection.path, ItemMapping.searchQueries([:])).map { path(of: $0.ref, in: collection) }
            }
            var st = stat()
            let exists = stat(collection.path, &st) == 0
            return [
                ("Items", .objectPaths(items)),
                ("Label", .string(CollectionLabels.label(of: collection))),
                ("Locked", .boolean(!held)),
                ("Created", .uint64(exists ? UInt64(max(0, st.st_ctim.tv_sec)) : 0)),
                ("Modified", .uint64(exists ? UInt64(max(0, st.st_mtim.tv_sec)) : 0))
            ]
        case .item(let collectionID, let id):
            guard interface.isEmpty || interface == Self.itemInterface else { return [] }
            let handle = try item(collectionID, id)
            guard let ref = handle.ref else {
                let attributes = lockedSearches[id]?.attributes ?? [:]
                return [
                    ("Locked", .boolean(true)), ("Attributes", .stringMap(attributes)),
                    ("Label", .string("locked items in \(handle.collection.name)")),
                    ("Created", .uint64(0)), ("Modified", .uint64(0))
                ]
            }
            guard store.heldPaths().contains(handle.collection.path) else {
                // Attributes are encrypted: nothing but the state can be told while locked.
                return [
                    ("Locked", .boolean(true)), ("Attributes", .stringMap([:])), ("Label", .string("")),
                    ("Created", .uint64(0)), ("Modified", .uint64(0))
                ]
            }
            let attributes = try store.attributes(handle.collection.path, ref: ref)
            return [
                ("Locked", .boolean(false)),
                ("Attributes", .stringMap(ItemMapping.busAttributes(attributes))),
                ("Label", .string(ItemMapping.text(attributes[kSecAttrLabel]) ?? "")),
                ("Created", .uint64(Self.seconds(attributes[kSecAttrCreationDate]))),
                ("Modified", .uint64(Self.seconds(attributes[kSecAttrModificationDate])))
            ]
        case .session, .prompt:
            return []
        }
    }
}
