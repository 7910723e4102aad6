/// Keyed BLAKE2b fingerprints of attribute values, so equality lookups work on an encrypted
/// file without revealing values (`docs/format.md` §5, `docs/security.md`).
///
/// Inputs are injective: a type tag, then a u32 length and the bytes (NUL bytes are data).
enum BlindIndex {
    /// Bytes of a single-attribute index value.
    static let attributeLength = 16
    /// Bytes of the primary-key index value.
    static let primaryKeyLength = 32

    /// The key id of an attribute's index: `class4CC << 32 | attr4CC`.
    static func keyID(classCode: String, attribute: String) -> UInt64 {
        UInt64(fourCC(classCode)) << 32 | UInt64(fourCC(attribute))
    }

    /// The key id of a class's primary-key index (attribute code `"#pk#"`, which no
    /// attribute uses).
    static func primaryKeyID(classCode: String) -> UInt64 {
        keyID(classCode: classCode, attribute: "#pk#")
    }

    /// A 4-character code as a big-endian integer (shorter codes padded with spaces).
    static func fourCC(_ code: String) -> UInt32 {
        var bytes = Array(code.utf8.prefix(4))
        while bytes.count < 4 { bytes.append(0x20) }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The index value of one encoded attribute value.
    static func value(_ encoded: [UInt8], key: SymmetricKey) -> [UInt8] {
        Hashing.mac(encoded, key: key, length: attributeLength)
    }

    /// The index value of an encoded primary-key tuple.
    static func primaryKey(_ encoded: [UInt8], key: SymmetricKey) -> [UInt8] {
        Hashing.mac(encoded, key: key, length: primaryKeyLength)
    }
}
