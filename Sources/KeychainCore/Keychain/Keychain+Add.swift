#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Keychain {
    /// Adds an item (Apple's `SecItemAdd`): the class, its attributes and `kSecValueData`.
    ///
    ///     try keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "db",
    ///                       kSecAttrAccount: "app", kSecValueData: Data("s3cret".utf8)])
    ///
    /// - Returns: what the kSecReturn… keys ask for, or nil.
    /// - Throws: errSecDuplicateItem when an item with the same primary key exists;
    ///   errSecParam, errSecNoSuchAttr, errSecNoSuchClass for a bad query.
    @discardableResult
    public func add(_ query: [String: Any]) throws -> Any? {
        var (q, data, attributes) = try Self.prepareNew(query)
        defer { if data != nil { Sodium.wipe(&data!) } }
        let itemID = Sodium.randomBytes(16)
        try write { keys, state in
            try insertNew(itemID: itemID, q.itemClass, attributes, data: data, keys: keys, state: &state)
        }
        guard q.returnData || q.returnAttributes || q.returnPersistentRef else { return nil }
        let dataValue: Data? = q.returnData ? Data(data ?? []) : nil
        return Results.item(attributes, persistentRef: Array(q.itemClass.code.utf8) + itemID, data: dataValue, query: q)
    }

    /// Adds many items in one write transaction, all or none: one durable commit for the
    /// lot, so imports and benchmarks run at library speed. Each query is as `add`'s;
    /// kSecReturn… keys are ignored. The queries are read one at a time as added.
    ///
    ///     try keychain.addAll((0..<1000).lazy.map { i in
    ///         [kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecValueData: Data("s".utf8)]
    ///     })
    ///
    /// - Returns: how many items were added.
    /// - Throws: the first failure, its message starting "item N:" (counting from 1); nothing
    ///   is added then.
    @discardableResult
    public func addAll<S: Sequence>(_ queries: S) throws -> Int where S.Element == [String: Any] {
        try store.withBulkCache { try addAllInOneTransaction(queries) }
    }

    private func addAllInOneTransaction<S: Sequence>(_ queries: S) throws -> Int where S.Element == [String: Any] {
        try write { keys, state in
            var count = 0
            for query in queries {
                count += 1
                do {
                    var (q, data, attributes) = try Self.prepareNew(query)
                    defer { if data != nil { Sodium.wipe(&data!) } }
                    try insertNew(itemID: Sodium.randomBytes(16), q.itemClass, attributes, data: data, keys: keys, state: &state)
                } catch let error as KeychainError {
                    throw KeychainError(error.status, "item \(count): \(error.message)", hint: error.hint)
                }
            }
            return count
        }
    }

    /// A new item's parsed query (its data moved out, for the caller to wipe) and its
    /// complete attributes with creation and modification dates (now, unless an import
    /// keeps the original ones).
    static func prepareNew(_ query: [String: Any], created: Date? = nil, modified: Date? = nil) throws -> (ItemQuery, [UInt8]?, [String: AttributeValue]) {
        var q = try ItemQuery(query, for: .add)
        // One reference to the secret's bytes, wiped by the caller.
        var data = q.data
        q.data = nil
        guard q.itemClass != .identity else {
            if data != nil { Sodium.wipe(&data!) }
            throw KeychainError(
                errSecParam, "an identity is added as its certificate and its private key, as two items",
                hint: "add the certificate (kSecClassCertificate) and the key (kSecClassKey) separately")
        }
        do {
            var attributes = try completeForAdd(q, data: data)
            let now = Date().timeIntervalSinceReferenceDate
            attributes["cdat"] = .date(created?.timeIntervalSinceReferenceDate ?? now)
            attributes["mdat"] = .date(modified?.timeIntervalSinceReferenceDate ?? now)
            return (q, data, attributes)
        } catch {
            if data != nil { Sodium.wipe(&data!) }
            throw error
        }
    }

    /// Seals and inserts one new item inside a write transaction, and counts it in the header.
    /// - Parameter known: the attributes' fingerprints, when the caller computed them already.
    func insertNew(
        itemID: [UInt8], _ itemClass: ItemClass, _ attributes: [String: AttributeValue], data: [UInt8]?,
        known: Fingerprints? = nil, keys: KeyHierarchy, state: inout StateRecord
    ) throws {
        try authority?.admit(attributes)
        var row = try Self.seal(itemID: itemID, itemClass, attributes, data: data, known: known, keys: keys, rowVersion: state.generation)
        do {
            row.seq = try store.insert(row)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            throw KeychainError(
                errSecDuplicateItem, Self.duplicateMessage(itemClass, attributes),
                hint: "update it instead, or delete it first")
        }
        try account(&state, removing: nil, adding: row, keys: keys)
        state.itemCount += 1
    }

    /// A sealed row of an item's attributes and secret under a fresh data key.
    package static func seal(
        itemID: [UInt8], _ itemClass: ItemClass, _ attributes: [String: AttributeValue], data: [UInt8]?,
        known: Fingerprints?, keys: KeyHierarchy, rowVersion: UInt64
    ) throws -> ItemRow {
        let codec = RowCodec(keys: keys)
        guard let data else {
            return try codec.seal(itemID: itemID, itemClass: itemClass, rowVersion: rowVersion, attributes: attributes, data: nil, known: known)
        }
        return try data.withUnsafeBytes {
            try codec.seal(itemID: itemID, itemClass: itemClass, rowVersion: rowVersion, attributes: attributes, data: $0, known: known)
        }
    }

    /// The stored attributes of a new item: primary-key defaults, accessibility, label,
    /// synchronizable flag, and the certificate or key fields derived from its data.
    static func completeForAdd(_ q: ItemQuery, data: [UInt8]?) throws -> [String: AttributeValue] {
        var attributes = q.attributes
        // An empty Secret Service map is no map: it is not stored (docs/format.md §4).
        for (key, value) in attributes where value.isEmptyMap { attributes[key] = nil }
        attributes["sync"] = .int(q.sync == .synchronizable ? 1 : 0)
        if attributes["pdmn"] == nil {
            attributes["pdmn"] = .string(q.itemClass == .certificate ? "dk" : "ak")
        }
        switch q.itemClass {
        case .certificate:
            try deriveCertificateAttributes(&attributes, data: data)
        case .key:
            if attributes["klbl"] == nil, let data {
                // Apple hashes the public key; kc cannot derive one from an arbitrary key
                // blob, so it hashes the blob (docs/apple-compatibility.md).
                attributes["klbl"] = .data(SHA1.hash(data))
            }
            deriveKeyAttributes(&attributes, data: data)
        default:
            break
        }
        for key in Schema.primaryKey(q.itemClass) where attributes[key] == nil {
            attributes[key] = Schema.defaultValue(key)
        }
        if attributes["labl"] == nil {
            if q.itemClass == .genericPassword, let s = attributes["svce"] { attributes["labl"] = s }
            if q.itemClass == .internetPassword, let s = attributes["srvr"] { attributes["labl"] = s }
        }
        return attributes
    }

    /// Fills a certificate's issuer, serial number, subject, subject key id, public-key
    /// hash, type and encoding from its DER data, as Apple does, unless given.
    static func deriveCertificateAttributes(_ attributes: inout [String: AttributeValue], data: [UInt8]?) throws {
        guard let data, !data.isEmpty else { return }
        guard let cert = DERCertificate(der: data) else {
            if attributes["issr"] == nil || attributes["slnr"] == nil {
                throw KeychainError(
                    errSecParam, "the certificate's data is not a DER X.509 certificate",
                    hint: "pass DER bytes, or give kSecAttrIssuer and kSecAttrSerialNumber")
            }
            return
        }
        let derived: [String: AttributeValue?] = [
            "issr": .data(cert.issuer), "slnr": .data(cert.serialNumber), "subj": .data(cert.subject),
            "pkhh": .data(cert.publicKeyHash), "skid": cert.subjectKeyID.map { .data($0) },
            "ctyp": .int(Int64(cert.version)), "cenc": .int(3)
        ]
        for (key, value) in derived where attributes[key] == nil {
            if let value { attributes[key] = value }
        }
    }

    /// Fills a key's class, type and size in bits (and effective size) from its data when it
    /// is a key encoding kc reads (`KeyBlob`), as Apple's SecKeyCreateWithData does, unless given.
    static func deriveKeyAttributes(_ attributes: inout [String: AttributeValue], data: [UInt8]?) {
        guard let data, !data.isEmpty, let key = KeyBlob(data: data) else { return }
        let derived: [String: AttributeValue?] = [
            "kcls": .int(Int64(key.keyClass)), "type": .int(Int64(key.keyType)),
            "bsiz": key.bits.map { .int(Int64($0)) }, "esiz": key.bits.map { .int(Int64($0)) }
        ]
        for (key, value) in derived where attributes[key] == nil {
            if let value { attributes[key] = value }
        }
    }

    static func duplicateMessage(_ itemClass: ItemClass, _ attributes: [String: AttributeValue]) -> String {
        func text(_ key: String) -> String {
            switch attributes[key] {
            case .string(let s)?: return "\"\(s)\""
            case .data(let d)?: return "<\(d.count) bytes>"
            case .int(let v)?: return String(v)
            default: return "\"\""
            }
        }
        switch itemClass {
        case .genericPassword:
            let map = attributes[kcAttrSecretServiceAttributes] == nil ? "" : " with the same Secret Service attributes"
            return "an item for service \(text("svce")) and account \(text("acct"))\(map) already exists"
        case .internetPassword: return "an item for server \(text("srvr")) and account \(text("acct")) already exists"
        default: return "an item with the same primary key already exists"
        }
    }
}
