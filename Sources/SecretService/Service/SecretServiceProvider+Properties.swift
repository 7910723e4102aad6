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
            // Only the property asked for is worked out: `Locked` or `Label` of a collection
            // costs the same whatever its size (only `Items` lists it).
            let all = try propertyValues(target, interface: interface, only: name)
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

    /// The properties of `target` under `interface` (an empty interface name means its own);
    /// with `only`, that one alone (or none).
    private func propertyValues(_ target: ObjectPath, interface: String, only: String? = nil) throws(BusError) -> [(String, BusValue)] {
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
            var values: [(String, BusValue)] = []
            for name in Self.collectionProperties where only == nil || only == name {
                values.append((name, try collectionProperty(name, of: collection)))
            }
            return values
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

    static let collectionProperties = ["Items", "Label", "Locked", "Created", "Modified"]

    /// One property of a collection. Only `Items` lists the keychain (page by page through
    /// the agent, references only); `Locked` is whether the agent holds the keychain (one
    /// `status` round trip), `Label` its name, the dates its file's.
    private func collectionProperty(_ name: String, of collection: KeychainCollections.Collection) throws(BusError) -> BusValue {
        switch name {
        case "Items":
            guard store.heldPaths().contains(collection.path) else { return .objectPaths([]) }
            let found = try store.search(collection.path, ItemMapping.searchQueries([:]), attributes: false)
            return .objectPaths(try Self.fitting(found.map { path(of: $0.ref, in: collection) }))
        case "Label":
            return .string(CollectionLabels.label(of: collection))
        case "Locked":
            return .boolean(!store.heldPaths().contains(collection.path))
        default:
            var st = stat()
            guard stat(collection.path, &st) == 0 else { return .uint64(0) }
            return .uint64(UInt64(max(0, name == "Created" ? st.st_ctim.tv_sec : st.st_mtim.tv_sec)))
        }
    }

    /// The most bytes of paths one reply carries: a dbus-daemon's own message limit (32 MiB,
    /// unless its configuration raises it as Debian's session.conf does) less room for the
    /// rest of the message. A daemon closes the connection of a program that sends a longer
    /// message, and D-Bus carries no array over 64 MiB on any bus.
    static let maxArrayBytes = (32 << 20) - (64 << 10)

    /// `paths`, when they fit in one reply on any bus (about 380,000 item paths of a
    /// collection named `login`). - Throws: `LimitsExceeded`, saying how many there are,
    /// when they do not: sending them could cost the provider its bus connection, and
    /// every client its session (docs/secret-service.md, "Speed").
    static func fitting(_ paths: [String]) throws(BusError) -> [String] {
        // Each element: its length (u32), its bytes and a NUL, aligned to 4.
        let bytes = paths.reduce(0) { $0 + ((4 + $1.utf8.count + 1 + 3) & ~3) }
        guard bytes <= maxArrayBytes else {
            throw BusError(
                "org.freedesktop.DBus.Error.LimitsExceeded",
                "\(paths.count) item paths take \(bytes) bytes, more than one D-Bus message may carry on every bus (32 MiB): use SearchItems with attributes")
        }
        return paths
    }
}
