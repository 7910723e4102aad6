extension Keychain {
    /// Brings a keychain of an older format up to `formatVersion` right after it was opened
    /// with its password, in one write transaction (`docs/format.md` §8).
    ///
    /// Format 1 → 3: the rows are checked as format 1 checked them (count and accumulator
    /// of (item id, row version, class)) and, since format 1 did not cover them, every
    /// row's other columns are checked by opening its metadata (fingerprints recomputed)
    /// and its data; then the accumulator is recomputed over every column.
    /// Format 2 → 3: the rows are checked as format 2 checks them (every column); no row
    /// changes (a row without Secret Service pairs has the same accumulator term in both).
    /// Any format → 4: every row's metadata is opened; an item whose stored accessibility is
    /// after-first-unlock (`ck`, `cku`, `dk`, `dku`: certificates, by Apple's default) gets
    /// its data key re-wrapped and its metadata re-sealed under that class's key, with
    /// the migration's generation as its row version; the rest keep their rows.
    /// Format 4 → 5: the rows are checked as format 4 checks them and none changes; the
    /// header MAC is written anew in format 5's layout, which covers the whole password
    /// record (the wrap, the KDF fields), so that none can be spliced in from an older copy.
    /// Either way the master key is then re-wrapped with the new format in its associated
    /// data under the same KEK, and the minimum writer version raised, so that an older kc
    /// refuses to write the file. One write transaction: a kill at any moment leaves the
    /// old file or the migrated one. The pair table (`kc_pairs`) itself is created by the
    /// schema migration when the store opens (`Migrations`, schema 3).
    /// - Throws: errSecDecode when the old file fails its checks (nothing is written);
    ///   errSecReadOnly when the file cannot be written.
    func migrateFormat(from opened: KeychainRecord, kek: SymmetricKey) throws {
        let keys = try allKeys()
        let migrated: (record: KeychainRecord, generation: UInt64)? = try store.transaction(write: true) {
            let current = try store.readKeychainRecord()
            guard current == opened else {
                // Another kc migrated (or changed) it meanwhile: the open starts again from
                // what is there now, authenticated by the same KEK or refused.
                return nil
            }
            var state = try store.readState()
            try checkHeader(current, state, keys: keys, migrating: true)
            try verifyRows(keys, state, formatVersion: current.formatVersion)
            state.generation += 1
            let moved =
                current.formatVersion < 4
                ? try moveToClassKeys(keys, formatVersion: current.formatVersion, generation: state.generation) : 0
            if current.formatVersion == 1 || moved > 0 {
                var acc = [UInt8](repeating: 0, count: 32)
                try store.forEachRow(.all, includeData: true) { row in
                    Header.xor(&acc, try Header.term(row, keys: keys))
                    return true
                }
                state.accumulator = acc
            }
            var record = current
            record.formatVersion = Keychain.formatVersion
            record.wrappedMasterKey = try AEAD.seal(keys.master().bytes, key: kek, ad: AssociatedData.masterKeyWrap(record))
            state.minWriterVersion = Keychain.writerVersion
            state.mac = Header.mac(state, record: record, keys: keys)
            try store.writeKeychainRecord(record)
            try store.writeState(state)
            return (record, state.generation)
        }
        if let migrated {
            highestGeneration = max(highestGeneration, migrated.generation)
            openedRecord = migrated.record
            rowLedger.invalidate()
            verifiedStamp = nil
            return
        }
        // Someone else's migration: accept its record only if our KEK opens its wrap.
        let now = try store.transaction(write: false) { try store.readKeychainRecord() }
        guard now.formatVersion == Keychain.formatVersion, now.keychainID == opened.keychainID,
            (try? AEAD.open(now.wrappedMasterKey, key: kek, ad: AssociatedData.masterKeyWrap(now), what: "the master key")) != nil
        else {
            throw KeychainError(
                errSecInteractionNotAllowed, "\(path) changed while it was being opened; nothing was written",
                hint: "try again")
        }
        openedRecord = now
    }

    /// Format 4's step of a migration, inside its transaction: opens every row (its data
    /// too, for a format-1 file, which did not cover it) and moves each item whose
    /// accessibility is not when-unlocked to its class key (`RowCodec.rekey`, the data
    /// ciphertext kept). Returns how many rows moved; the caller recomputes the accumulator.
    /// - Throws: errSecDecode when a row does not open (nothing is written).
    func moveToClassKeys(_ keys: KeyHierarchy, formatVersion: UInt32, generation: UInt64) throws -> Int {
        let codec = RowCodec(keys: keys)
        var moves: [(ItemRow, [String: AttributeValue])] = []
        try store.forEachRow(.all, includeData: true) { row in
            let item = try codec.open(row, checkingProtection: false)
            if formatVersion == 1 { _ = try codec.openData(row) }
            // Formats 1–3 wrote no protection class: a row claiming one was edited.
            guard row.protection == .whenUnlocked else {
                throw KeychainError(errSecDecode, "a row of \(path) has a protection class its format never wrote: the file was tampered with")
            }
            if ProtectionClass(item.attributes) != row.protection { moves.append((row, item.attributes)) }
            return true
        }
        for (row, attributes) in moves {
            try store.replace(codec.rekey(row, attributes: attributes, to: codec, rowVersion: generation))
        }
        return moves.count
    }
}
