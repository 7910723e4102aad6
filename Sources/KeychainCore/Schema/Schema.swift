/// Apple's item schema as kc stores it (`SecItemSchema.c`, v12 classes; see
/// docs/apple-compatibility.md, "Keys and values"): which attributes each class has,
/// their kinds, primary keys and defaults.
package enum Schema {
    private static let all: Set<ItemClass> = [.genericPassword, .internetPassword, .certificate, .key]
    private static let passwords: Set<ItemClass> = [.genericPassword, .internetPassword]

    /// Every attribute kc accepts, by raw key.
    static let attributes: [String: AttributeSpec] = {
        var specs: [AttributeSpec] = [
            AttributeSpec("cdat", .date, all),
            AttributeSpec("mdat", .date, all),
            AttributeSpec("labl", .blob, all, index: .label),
            AttributeSpec("alis", .blob, all),
            AttributeSpec("agrp", .string, all, index: .accessGroup),
            AttributeSpec("pdmn", .string, all),
            AttributeSpec("sync", .bool, all),
            // kc extension: access-control flags (SecAccessControlCreateFlags' raw value).
            AttributeSpec(kcAttrAccessControlFlags, .number, all),
            AttributeSpec("desc", .blob, passwords),
            AttributeSpec("icmt", .blob, passwords),
            AttributeSpec("crtr", .number, passwords.union([.key])),
            AttributeSpec("type", .number, passwords.union([.key])),
            AttributeSpec("invi", .bool, passwords),
            AttributeSpec("nega", .bool, passwords),
            AttributeSpec("acct", .blob, passwords, index: .account),
            AttributeSpec("svce", .blob, [.genericPassword], index: .service),
            AttributeSpec("gena", .blob, [.genericPassword]),
            // kc extensions for the Secret Service (docs/apple-compatibility.md).
            AttributeSpec(kcAttrSecretServiceAttributes, .map, [.genericPassword]),
            AttributeSpec(kcAttrContentType, .string, [.genericPassword]),
            AttributeSpec("sdmn", .blob, [.internetPassword], index: .securityDomain),
            AttributeSpec("srvr", .blob, [.internetPassword], index: .server),
            AttributeSpec("ptcl", .number, [.internetPassword]),
            AttributeSpec("atyp", .blob, [.internetPassword]),
            AttributeSpec("port", .number, [.internetPassword]),
            AttributeSpec("path", .blob, [.internetPassword], index: .path),
            AttributeSpec("ctyp", .number, [.certificate]),
            AttributeSpec("cenc", .number, [.certificate]),
            AttributeSpec("subj", .data, [.certificate]),
            AttributeSpec("issr", .data, [.certificate]),
            AttributeSpec("slnr", .data, [.certificate]),
            AttributeSpec("skid", .data, [.certificate]),
            AttributeSpec("pkhh", .data, [.certificate], index: .applicationLabel),
            AttributeSpec("kcls", .number, [.key]),
            AttributeSpec("klbl", .data, [.key], index: .applicationLabel),
            AttributeSpec("atag", .blob, [.key], index: .applicationTag),
            AttributeSpec("bsiz", .number, [.key]),
            AttributeSpec("esiz", .number, [.key]),
            AttributeSpec("sdat", .date, [.key]),
            AttributeSpec("edat", .date, [.key])
        ]
        for flag in [
            "perm", "priv", "modi", "sens", "asen", "extr", "next",
            "encr", "decr", "drve", "sign", "vrfy", "snrc", "vyrc", "wrap", "unwp"
        ] {
            specs.append(AttributeSpec(flag, .bool, [.key]))
        }
        return Dictionary(uniqueKeysWithValues: specs.map { ($0.key, $0) })
    }()

    /// The attribute spec for a key valid in `itemClass`, or nil.
    static func attribute(_ key: String, in itemClass: ItemClass) -> AttributeSpec? {
        guard let spec = attributes[key] else { return nil }
        if itemClass == .identity {
            return spec.classes.contains(.certificate) || spec.classes.contains(.key) ? spec : nil
        }
        return spec.classes.contains(itemClass) ? spec : nil
    }

    /// Whether an attribute holds text (string or blob kind): the only ones the kc
    /// ignore-case, prefix and substring extensions apply to, and so the only ones they
    /// cannot look up by exact index.
    static func isText(_ key: String) -> Bool {
        let kind = attributes[key]?.kind
        return kind == .blob || kind == .string
    }

    /// The primary-key attributes of a class, in the fixed order they are encoded.
    static func primaryKey(_ itemClass: ItemClass) -> [String] {
        switch itemClass {
        case .genericPassword: return ["agrp", "acct", "svce", "sync"]
        case .internetPassword: return ["agrp", "acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "sync"]
        case .certificate: return ["agrp", "ctyp", "issr", "slnr", "sync"]
        case .key: return ["agrp", "kcls", "klbl", "atag", "crtr", "type", "bsiz", "esiz", "sdat", "edat", "sync"]
        case .identity: return []
        }
    }

    /// The value an absent primary-key attribute takes: `""`, empty data, 0 or 2001-01-01.
    static func defaultValue(_ key: String) -> AttributeValue? {
        guard let spec = attributes[key] else { return nil }
        switch spec.kind {
        case .blob, .string: return .string("")
        case .data: return .data([])
        case .number, .bool: return .int(0)
        case .date: return .date(0)
        case .map: return nil
        }
    }

    /// The attributes that join a class's primary key only when the item has them (a
    /// generic password's Secret Service map, when not empty), encoded after the fixed ones:
    /// every item without them keeps the fingerprint it had in format 2 (`docs/format.md` §5).
    static func optionalPrimaryKey(_ itemClass: ItemClass) -> [String] {
        itemClass == .genericPassword ? [kcAttrSecretServiceAttributes] : []
    }

    /// The map attribute whose pairs are blind-indexed one by one, if the class has one.
    static func pairAttribute(_ itemClass: ItemClass) -> String? {
        itemClass == .genericPassword ? kcAttrSecretServiceAttributes : nil
    }

    /// The index columns that apply to a class, in schema order.
    static func indexColumns(_ itemClass: ItemClass) -> [(column: IndexColumn, attribute: String)] {
        ClassPlan.of(itemClass).indexes.map { ($0.column, $0.attribute) }
    }

    /// `indexColumns` worked out from the attribute table (ClassPlan caches it).
    static func computeIndexColumns(_ itemClass: ItemClass) -> [(column: IndexColumn, attribute: String)] {
        IndexColumn.allCases.compactMap { column in
            let key = column == .applicationLabel && itemClass == .certificate ? "pkhh" : column.rawValue
            guard let spec = attributes[key], spec.classes.contains(itemClass) else { return nil }
            return (column, key)
        }
    }

    /// The blind-index key ids an unlocked keychain needs.
    package static var blindKeyIDs: [UInt64] {
        var ids: [UInt64] = []
        for c in ItemClass.stored {
            ids.append(BlindIndex.primaryKeyID(classCode: c.code))
            for (column, _) in indexColumns(c) {
                ids.append(blindKeyID(column: column, itemClass: c))
            }
            if let attribute = pairAttribute(c) { ids.append(BlindIndex.keyID(classCode: c.code, attribute: attribute)) }
        }
        return ids
    }

    /// The blind-index key of a column in a class. Certificates' `pkhh` and keys' `klbl`
    /// share one key, so an identity join compares equal fingerprints.
    static func blindKeyID(column: IndexColumn, itemClass: ItemClass) -> UInt64 {
        if column == .applicationLabel {
            return BlindIndex.keyID(classCode: "keys", attribute: "klbl")
        }
        return BlindIndex.keyID(classCode: itemClass.code, attribute: column.rawValue)
    }
}
