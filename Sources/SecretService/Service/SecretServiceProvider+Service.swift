import KeychainCore
import KeychainClient

/// The org.freedesktop.Secret.Service interface.
extension SecretServiceProvider {
    static let plainAlgorithm = "plain"
    static let dhAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    /// At most this many sessions are open for one client (its oldest closed first).
    static let maxSessionsPerClient = 1024
    /// At most this many prompts wait for one client (its oldest dismissed first).
    static let maxPromptsPerClient = 64
    /// At most this many open searches wait on a locked keychain (oldest forgotten first).
    static let maxLockedSearches = 256
    /// At most this many bytes of attribute names and values in those searches together
    /// (oldest forgotten first), so that no client can make the provider hold memory.
    static let maxLockedSearchBytes = 1 << 20
    /// A search of at most this many items is ordered (`orderedMatches`).
    static let orderedSearchLimit = 1000

    func serviceMethod(_ call: BusCall) throws(BusError) -> [BusValue] {
        let a = call.arguments
        switch (call.member, a.count) {
        case ("OpenSession", 2):
            guard let algorithm = a[0].string else { throw .invalidArgs("OpenSession takes (s algorithm, v input)") }
            return try openSession(algorithm, input: a[1].unwrapped, caller: call.sender)
        case ("CreateCollection", 2):
            guard let properties = a[0].propertyMap, let alias = a[1].string else {
                throw .invalidArgs("CreateCollection takes (a{sv} properties, s alias)")
            }
            return try createCollection(properties, alias: alias, caller: call.sender)
        case ("SearchItems", 1):
            guard let attributes = a[0].stringMap else { throw .invalidArgs("SearchItems takes (a{ss} attributes)") }
            var unlocked: [String] = [], locked: [String] = []
            let held = store.heldPaths()
            for collection in collections.all {
                let found = try search(collection, attributes, held: held)
                if held.contains(collection.path) { unlocked += found } else { locked += found }
            }
            return [.objectPaths(unlocked), .objectPaths(locked)]
        case ("Unlock", 1):
            guard let objects = a[0].objectPaths else { throw .invalidArgs("Unlock takes (ao objects)") }
            return try unlock(objects, caller: call.sender)
        case ("Lock", 1):
            guard let objects = a[0].objectPaths else { throw .invalidArgs("Lock takes (ao objects)") }
            return try lock(objects)
        case ("GetSecrets", 2):
            guard let items = a[0].objectPaths, let sessionPath = a[1].objectPath else {
                throw .invalidArgs("GetSecrets takes (ao items, o session)")
            }
            let session = try session(sessionPath, for: call.sender)
            var entries: [BusValue.DictionaryEntry] = []
            // One agent round trip per item; an item of a locked keychain, or one gone, is
            // left out, as the specification says.
            for path in items {
                guard case .item(let collectionID, let id)? = ObjectPath(path),
                    let found = try? item(collectionID, id), let ref = found.ref,
                    var item = try? store.secretAndAttributes(found.collection.path, ref: ref)
                else { continue }
                defer { Sodium.wipe(&item.secret) }
                let contentType = ItemMapping.text(item.attributes[ItemMapping.contentTypeKey]).flatMap { $0.isEmpty ? nil : $0 }
                entries.append(.init(.objectPath(path), try session.wrap(item.secret, contentType: contentType ?? "text/plain")))
            }
            return [.dictionary(key: "o", value: "(oayays)", entries)]
        case ("ReadAlias", 1):
            guard let name = a[0].string else { throw .invalidArgs("ReadAlias takes (s name)") }
            collections.refresh()
            return [.objectPath(collections.alias(name).map { path(of: $0) } ?? ObjectPath.none)]
        case ("SetAlias", 2):
            guard let name = a[0].string, let target = a[1].objectPath else { throw .invalidArgs("SetAlias takes (s name, o collection)") }
            // The default alias follows KC_KEYCHAIN; setting it to what it is is accepted.
            if name == "default", let current = collections.alias("default"), target == path(of: current) { return [] }
            throw .notSupported("kc's default collection is the default keychain ($KC_KEYCHAIN, else login); aliases cannot be changed over D-Bus")
        default:
            throw .unknownMethod("Service has no method \(call.member) taking \(a.count) arguments")
        }
    }

    private func openSession(_ algorithm: String, input: BusValue, caller: String) throws(BusError) -> [BusValue] {
        // A client keeps at most maxSessionsPerClient: its oldest is closed for a new one.
        let mine = sessions.values.filter { $0.owner == caller }
        if mine.count >= Self.maxSessionsPerClient, let oldest = mine.min(by: { Self.isOlder($0.id, than: $1.id) }) {
            sessions[oldest.id] = nil
        }
        let id = nextID()
        switch algorithm {
        case Self.plainAlgorithm:
            sessions[id] = ClientSession(id: id, owner: caller, cipher: nil)
            return [.variant(.string("")), .objectPath(ObjectPath.session(id).text)]
        case Self.dhAlgorithm:
            guard let key = input.byteArray else { throw .invalidArgs("\(Self.dhAlgorithm) takes the client's public key (ay)") }
            let cipher = try SessionCipher(clientPublicKey: key)
            sessions[id] = ClientSession(id: id, owner: caller, cipher: cipher)
            return [.variant(.bytes(cipher.publicKey)), .objectPath(ObjectPath.session(id).text)]
        default:
            throw .notSupported("the session algorithm \(algorithm) is not supported; use plain or \(Self.dhAlgorithm)")
        }
    }

    /// CreateCollection: the default alias, or a label that names an existing keychain (or
    /// that a client gave one), gives that collection (libsecret, secretstorage and keyring ask for the default one
    /// when they cannot read the alias). Any other label makes a new keychain whose password
    /// the default keychain keeps (`createKeychainCollection`): at once when the default
    /// keychain is unlocked, else through a prompt that completes when it is.
    private func createCollection(_ properties: [String: BusValue], alias: String, caller: String) throws(BusError) -> [BusValue] {
        collections.refresh()
        let label = properties["org.freedesktop.Secret.Collection.Label"]?.string ?? ""
        if alias == "default" || alias.isEmpty && label.isEmpty, let found = collections.alias("default") {
            return [.objectPath(path(of: found)), .objectPath(ObjectPath.none)]
        }
        let name = Self.keychainName(for: label.isEmpty ? alias : label)
        // A keychain's name before any label: a label a client set never shadows another
        // keychain's name (the default collection is walked first).
        if let found = collections.all.first(where: { $0.name == name })
            ?? (label.isEmpty ? nil : collections.all.first(where: { CollectionLabels.label(of: $0) == label }))
        {
            return [.objectPath(path(of: found)), .objectPath(ObjectPath.none)]
        }
        guard KeychainSession.exists(defaultKeychain) else {
            throw .failed("there is no default keychain to keep the new collection's password: run `kc create` first")
        }
        if store.heldPaths().contains(defaultKeychain) {
            return [.objectPath(try createKeychainCollection(name)), .objectPath(ObjectPath.none)]
        }
        let prompt = PendingPrompt(id: nextID(), owner: caller, kind: .createCollection(name: name), keychains: [defaultKeychain])
        register(prompt)
        return [.objectPath(ObjectPath.none), .objectPath(ObjectPath.prompt(prompt.id).text)]
    }

    /// The item paths of `collection` matching `attributes`: the items themselves when the
    /// agent holds its keychain, else one placeholder that `Unlock` turns into them.
    func search(_ collection: KeychainCollections.Collection, _ attributes: [String: String], held: Set<String>) throws(BusError) -> [String] {
        guard held.contains(collection.path) else {
            guard KeychainSession.exists(collection.path) else { return [] }
            // What the keychain would refuse when unlocked (too many pairs, a name or value
            // over 64 KiB) is refused here too, before it is kept.
            do {
                _ = try AttributeMap(parsing: attributes, key: ItemMapping.mapKey)
            } catch let error as KeychainError {
                throw SecretStore.busError(error)
            } catch {
                throw .invalidArgs("\(error)")
            }
            return [lockedSearchPath(collection, attributes)]
        }
        return try Self.fitting(try orderedMatches(collection, attributes).map { path(of: $0.ref, in: collection) })
    }

    /// A search's results for a client: every item matching `attributes`, the one CreateItem
    /// with `replace` would replace first (`ItemMapping.ordered`), so that a lookup (the first
    /// result) and a replace meet the same item. The order needs the items' attributes, read
    /// again only for a search of at most `orderedSearchLimit` items (a lookup's); a larger
    /// one comes in the keychain's order, its references alone.
    func orderedMatches(_ collection: KeychainCollections.Collection, _ attributes: [String: String]) throws(BusError) -> [(
        ref: [UInt8], attributes: [String: Any]
    )] {
        let queries = ItemMapping.searchQueries(attributes)
        let found = try store.search(collection.path, queries, attributes: false)
        guard found.count > 1, found.count <= Self.orderedSearchLimit else { return found }
        return ItemMapping.ordered(try store.search(collection.path, queries), for: attributes)
    }

    /// A placeholder for a search in a locked collection (the specification returns locked
    /// matches in `locked`, and clients such as Chromium lose their data when a provider
    /// hides them): an item path whose id is `locked-N`, never a persistent reference.
    private func lockedSearchPath(_ collection: KeychainCollections.Collection, _ attributes: [String: String]) -> String {
        if let known = lockedSearches.first(where: { $0.value.collection == collection.id && $0.value.attributes == attributes }) {
            return ObjectPath.item(collection: collection.id, id: known.key).text
        }
        func size(_ map: [String: String]) -> Int { map.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } }
        var kept = lockedSearches.values.reduce(0) { $0 + size($1.attributes) }
        let adding = size(attributes)
        while lockedSearches.count >= Self.maxLockedSearches || kept + adding > Self.maxLockedSearchBytes,
            let oldest = lockedSearches.keys.min(by: { Self.isOlder($0, than: $1) })
        {
            kept -= lockedSearches[oldest].map { size($0.attributes) } ?? 0
            lockedSearches[oldest] = nil
        }
        let id = "locked" + nextID()
        lockedSearches[id] = (collection.id, attributes)
        return ObjectPath.item(collection: collection.id, id: id).text
    }

    /// What Unlock's result says of an object now unlocked: itself. A locked search's
    /// placeholder is itself too (it now stands for the first item the search finds), but
    /// only when the search finds one; otherwise it stands for nothing and is left out.
    /// libsecret marks unlocked exactly the proxies whose paths come back, then loads the
    /// secrets of those alone (`SECRET_SEARCH_UNLOCK | SECRET_SEARCH_LOAD_SECRETS`, as
    /// Chromium's os_crypt, VS Code and Electron's safeStorage search): the items' own paths
    /// here left its proxy locked, so no secret came back and Chromium made a new key.
    func resolveUnlocked(_ objectPath: String) -> [String] {
        guard case .item(let collectionID, let id)? = ObjectPath(objectPath), let search = lockedSearches[id],
            let collection = collections.collection(id: collectionID)
        else { return [objectPath] }
        let found = (try? store.first(collection.path, ItemMapping.searchQueries(search.attributes))) ?? nil
        return found == nil ? [] : [objectPath]
    }

    /// The keychain an object belongs to (collection, alias, item or placeholder).
    func keychainPath(of objectPath: String) throws(BusError) -> String {
        switch ObjectPath(objectPath) {
        case .collection(let id)?: return try collection(id).path
        case .alias(let name)?:
            guard let found = collections.alias(name) else { throw .noSuchObject("no collection has the alias \(name)") }
            return found.path
        case .item(let collectionID, _)?: return try collection(collectionID).path
        default: throw .noSuchObject("\(objectPath) is not a collection or an item")
        }
    }

    private func unlock(_ objects: [String], caller: String) throws(BusError) -> [BusValue] {
        var held = store.heldPaths()
        var unlocked: [String] = [], waiting: [String] = [], keychains: [String] = []
        for object in objects {
            let keychain = try keychainPath(of: object)
            if !held.contains(keychain), unlockFromDefault(keychain, held: held) { held.insert(keychain) }
            if held.contains(keychain) {
                unlocked += resolveUnlocked(object)
            } else {
                waiting.append(object)
                if !keychains.contains(keychain) { keychains.append(keychain) }
            }
        }
        guard !waiting.isEmpty else { return [.objectPaths(unlocked), .objectPath(ObjectPath.none)] }
        let prompt = PendingPrompt(id: nextID(), owner: caller, kind: .unlock(objects: waiting), keychains: keychains)
        register(prompt)
        return [.objectPaths(unlocked), .objectPath(ObjectPath.prompt(prompt.id).text)]
    }

    /// Lock: the agent forgets the keychains' keys (as `kc lock`); no prompt.
    private func lock(_ objects: [String]) throws(BusError) -> [BusValue] {
        var done: [String] = []
        for object in objects {
            let keychain = try keychainPath(of: object)
            try store.lock(keychain)
            done.append(object)
        }
        return [.objectPaths(done), .objectPath(ObjectPath.none)]
    }
}
