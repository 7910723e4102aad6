#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns attributes and secrets into sealed rows and back (`docs/format.md` §3–5), under
/// one keychain's keys.
package struct RowCodec {
    let keys: KeyHierarchy

    /// A codec under `keys`.
    package init(keys: KeyHierarchy) { self.keys = keys }

    /// The primary-key, index and pair fingerprints of an item's attributes.
    func fingerprints(_ itemClass: ItemClass, _ attributes: [String: AttributeValue]) throws -> Fingerprints {
        let plan = ClassPlan.of(itemClass)
        var w = ByteWriter(capacity: 128)
        for (key, defaultValue) in plan.primaryKey {
            w.label(key)
            w.raw((attributes[key] ?? defaultValue).indexEncoding)
        }
        // Only when the item has them: an item without keeps its format-2 fingerprint.
        for key in plan.optionalPrimaryKey {
            guard let value = attributes[key], !value.isEmptyMap else { continue }
            w.label(key)
            w.raw(value.indexEncoding)
        }
        let pk = BlindIndex.primaryKey(w.bytes, key: try keys.blindKey(plan.primaryKeyID))
        var indexes: [IndexColumn: [UInt8]] = [:]
        for (column, key, keyID) in plan.indexes {
            guard let value = attributes[key] else { continue }
            indexes[column] = BlindIndex.value(value.indexEncoding, key: try keys.blindKey(keyID))
        }
        var pairs: [[UInt8]] = []
        if let (attribute, _) = plan.pairs, case .map(let map)? = attributes[attribute] {
            pairs = try pairFingerprints(map, itemClass: itemClass)
        }
        return Fingerprints(pk: pk, indexes: indexes, pairs: pairs)
    }

    /// The fingerprints of a map's pairs (`docs/format.md` §5), sorted by bytes.
    func pairFingerprints(_ map: AttributeMap, itemClass: ItemClass) throws -> [[UInt8]] {
        guard let (_, keyID) = ClassPlan.of(itemClass).pairs else { return [] }
        let key = try keys.blindKey(keyID)
        return map.pairs.map { BlindIndex.value(AttributeMap.pairEncoding($0), key: key) }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The fingerprint of one value in an index column.
    func fingerprint(_ value: AttributeValue, column: IndexColumn, itemClass: ItemClass) throws -> [UInt8] {
        BlindIndex.value(value.indexEncoding, key: try keys.blindKey(Schema.blindKeyID(column: column, itemClass: itemClass)))
    }

    /// Seals a new version of an item under a fresh data key.
    /// - Parameter known: the attributes' fingerprints, when the caller computed them already.
    package func seal(
        itemID: [UInt8], itemClass: ItemClass, rowVersion: UInt64,
        attributes: [String: AttributeValue], data: UnsafeRawBufferPointer?,
        known: Fingerprints? = nil
    ) throws -> ItemRow {
        let prints = try known ?? fingerprints(itemClass, attributes)
        let protection = ProtectionClass(attributes)
        let classKeys = try keys.classKeys(protection)
        var row = ItemRow(
            itemID: itemID, classCode: itemClass.code, rowVersion: rowVersion, primaryKey: prints.pk,
            indexes: prints.indexes, pairs: prints.pairs, wrappedKey: [], metadata: [], data: nil,
            protection: protection)
        let dek = try KeyHierarchy.newDataKey()
        if let data {
            let padded = try Padding.pad(data)
            row.data = AEAD.seal(padded, key: dek, ad: AssociatedData.data(keychainID: keys.keychainID, itemID: itemID, classCode: itemClass.code))
        }
        row.wrappedKey = AEAD.seal(dek.bytes, key: classKeys.wrap, ad: AssociatedData.rowBinding(label: AssociatedData.dataKeyLabel, keys: keys, row: row))
        row.metadata = try sealMetadata(attributes, row: row)
        return row
    }

    /// Seals the metadata under the key of the row's protection class.
    private func sealMetadata(_ attributes: [String: AttributeValue], row: ItemRow) throws -> [UInt8] {
        var plain = Metadata.encode(attributes)
        defer { Sodium.wipe(&plain) }
        let padded = try Padding.pad(plain)
        return AEAD.seal(
            padded, key: try keys.classKeys(row.protection).meta, ad: AssociatedData.rowBinding(label: AssociatedData.metadataLabel, keys: keys, row: row))
    }

    /// Opens a row's metadata and checks it against the row: the class and every
    /// fingerprint (its map's pairs included) are recomputed from the plaintext, and its
    /// accessibility must give the row's protection class. - Throws: errSecDecode on any
    /// mismatch; errSecInteractionNotAllowed when the row's class key is not held (locked).
    /// - Parameter checkingProtection: false only for a migration to format 4, which opens
    ///   rows of earlier formats (all sealed when-unlocked) to find those it must move.
    package func open(_ row: ItemRow, checkingProtection: Bool = true) throws -> DecodedItem {
        guard let itemClass = ItemClass(rawValue: row.classCode), itemClass != .identity, row.itemID.count == 16 else {
            throw KeychainError(errSecDecode, "a row has an unknown class or a malformed id: the keychain is damaged or was tampered with")
        }
        let padded = try AEAD.open(
            row.metadata, key: try keys.classKeys(row.protection).meta,
            ad: AssociatedData.rowBinding(label: AssociatedData.metadataLabel, keys: keys, row: row),
            what: "an item's attributes")
        let length = try Padding.unpaddedLength(padded)
        var plain = padded.withUnsafeBytes { Array($0[0..<length]) }
        defer { Sodium.wipe(&plain) }
        let attributes = try Metadata.decode(plain)
        let prints = try fingerprints(itemClass, attributes)
        guard prints.pk == row.primaryKey, prints.indexes == row.indexes, prints.pairs == row.pairs,
            !checkingProtection || ProtectionClass(attributes) == row.protection
        else {
            throw KeychainError(errSecDecode, "an item's index columns do not match its attributes: the keychain was tampered with")
        }
        return DecodedItem(row: row, itemClass: itemClass, attributes: attributes)
    }

    /// Unwraps a row's data key.
    func dataKey(_ row: ItemRow) throws -> SymmetricKey {
        let dek = try AEAD.open(
            row.wrappedKey, key: try keys.classKeys(row.protection).wrap,
            ad: AssociatedData.rowBinding(label: AssociatedData.dataKeyLabel, keys: keys, row: row),
            what: "an item's data key")
        guard dek.count == AEAD.keyBytes else { throw KeychainError(errSecDecode, "an item's data key has the wrong size") }
        return SymmetricKey(dek)
    }

    /// Decrypts a row's secret; nil when the item has no data. The row must have been
    /// loaded with its data.
    func openData(_ row: ItemRow) throws -> OpenedData? {
        guard let sealed = row.data else { return nil }
        let dek = try dataKey(row)
        let padded = try AEAD.open(
            sealed, key: dek, ad: AssociatedData.data(keychainID: keys.keychainID, itemID: row.itemID, classCode: row.classCode),
            what: "an item's data")
        let length = try Padding.unpaddedLength(padded)
        return OpenedData(buffer: padded, length: length)
    }

    /// Decrypts a row's secret into `Data` for an API result (the copy Apple's API forces).
    package func openDataCopy(_ row: ItemRow) throws -> Data? {
        let opened = try openData(row)
        switch consume opened {
        case .some(let d): return d.withBytes { Data($0) }
        case .none: return nil
        }
    }

    /// Re-wraps a row's data key and re-seals its metadata under `target`'s keys (a
    /// re-key), with the protection class `attributes` give (a migration to format 4 moves
    /// rows this way); the data ciphertext is kept as it is.
    package func rekey(_ row: ItemRow, attributes: [String: AttributeValue], to target: RowCodec, rowVersion: UInt64) throws -> ItemRow {
        let itemClass = ItemClass(rawValue: row.classCode) ?? .genericPassword
        let dek = try dataKey(row)
        let prints = try target.fingerprints(itemClass, attributes)
        var new = ItemRow(
            seq: row.seq, itemID: row.itemID, classCode: row.classCode, rowVersion: rowVersion, primaryKey: prints.pk,
            indexes: prints.indexes, pairs: prints.pairs, wrappedKey: [], metadata: [], data: row.data,
            protection: ProtectionClass(attributes))
        new.wrappedKey = AEAD.seal(
            dek.bytes, key: try target.keys.classKeys(new.protection).wrap,
            ad: AssociatedData.rowBinding(label: AssociatedData.dataKeyLabel, keys: target.keys, row: new))
        new.metadata = try target.sealMetadata(attributes, row: new)
        return new
    }
}
