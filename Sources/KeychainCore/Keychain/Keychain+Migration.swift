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
    /// Either way the master key is then re-wrapped with the new format in its associated
    /// data under the same KEK, and the minimum writer version raised, so that an older kc
    /// refuses to write the file. The pair table (`kc_pairs`) itself is created by the
    /// schema migration when the store opens (`Migrations`, schema 3).
    /// - Throws: errSecDecode when the old file fails its checks (nothing is written);
    ///   errSecReadOnly when the file cannot be written.
    func migrateFormat(from opened: KeychainRecord, kek: SymmetricKey) throws {
        let keys = try unlockedKeys()
        let migrated: (record: KeychainRecord, generation: UInt64)? = try store.transaction(write: true) {
            let current = try store.readKeychainRecord()
            guard current == opened else {
                // Another kc migrated (or changed) it meanwhile: the open starts again from
                // what is there now, authenticated by the same KEK or refused.
                return nil
            }
            var state = try store.readState()
            try checkHeader(current, state, keys: keys)
            try verifyRows(keys, state, formatVersion: current.formatVersion)
            if current.formatVersion == 1 {
                let codec = RowCodec(keys: keys)
                var acc = [UInt8](repeating: 0, count: 32)
                try store.forEachRow(.all, includeData: true) { row in
                    _ = try codec.open(row)
                    _ = try codec.openData(row)
                    Header.xor(&acc, try Header.term(row, keys: keys))
                    return true
                }
                state.accumulator = acc
            }
            var record = current
            record.formatVersion = Keychain.formatVersion
            record.wrappedMasterKey = AEAD.seal(keys.master.bytes, key: kek, ad: AssociatedData.masterKeyWrap(record))
            state.generation += 1
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
            throw KeychainError(errSecInteractionNotAllowed, "\(path) changed while it was being opened; nothing was written",
                                hint: "try again")
        }
        openedRecord = now
    }
}
