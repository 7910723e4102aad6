extension Keychain {
    /// Changes the password: the master key is re-wrapped under a key derived from
    /// `newPassword` with a fresh salt; items are not touched. Ends with a TRUNCATE
    /// checkpoint so the old wrap does not linger in the -wal file. Copies of the file
    /// made before still open with the old password (use `rekey` when that matters).
    ///
    /// - Parameter profile: a new KDF profile, or nil to keep the current parameters.
    /// - Throws: errSecInteractionNotAllowed when another process changed the password or
    ///   re-keyed meanwhile (nothing is written).
    public func changePassword(to newPassword: borrowing SecureBytes, profile: KDFProfile? = nil) throws {
        try requireFileKeychain("changing the password")
        let keys = try allKeys()
        let before = try authenticatedRecord()
        var kdf = KDFParameters(algorithm: before.kdfAlgorithm, opslimit: before.kdfOpslimit, memlimit: before.kdfMemlimit, salt: [])
        if let profile { kdf = KDFParameters(profile: profile) }
        kdf.salt = Sodium.randomBytes(KDFParameters.saltBytes)
        // Argon2 runs outside the transaction; the write then compares-and-swaps.
        let kek = try kdf.deriveKey(password: newPassword)
        var record = before
        record.kdfAlgorithm = kdf.algorithm
        record.kdfOpslimit = kdf.opslimit
        record.kdfMemlimit = kdf.memlimit
        record.kdfSalt = kdf.salt
        record.wrappedMasterKey = try AEAD.seal(keys.master().bytes, key: kek, ad: AssociatedData.masterKeyWrap(record))
        // The write bumps the generation, and the header MAC covers the new record: the
        // record it replaces, spliced back in, fails the MAC, and a whole older header with
        // it is a generation any process that saw this one refuses.
        try write(replacingRecord: { current in
            guard current == before else {
                throw KeychainError(
                    errSecInteractionNotAllowed, "the password of \(self.path) was changed by another process meanwhile; nothing was written",
                    hint: "unlock with the current password and try again")
            }
            return record
        }) { _, _ in }
        openedRecord = record
        try store.compactLog()
    }

    /// The record whose wrap this process opened with the password. A password change or
    /// re-key starts from its KDF parameters and compares-and-swaps against it: parameters
    /// lowered in the file while kc waited for the new password are never used, and the
    /// write is refused.
    func authenticatedRecord() throws -> KeychainRecord {
        guard let openedRecord else {
            throw KeychainError(errSecInteractionNotAllowed, "\(path) was not opened with its password here", hint: "unlock it again")
        }
        return openedRecord
    }

    /// Replaces the master key (after a suspected leak): a new key generation, every
    /// data key re-wrapped and all metadata and indexes re-sealed in one transaction,
    /// under a new password. Secrets' ciphertexts are kept. Old copies of the file still
    /// open with the old password, but say nothing about items added afterwards.
    /// A key slot is kept when `keeping` gives the secret that opens it (a TPM2 slot's,
    /// unsealed again), and removed otherwise: a recovery key is kept nowhere.
    /// - Returns: the slots removed.
    @discardableResult
    public func rekey(newPassword: borrowing SecureBytes, profile: KDFProfile? = nil, keeping: SlotSecretSource = { _ in nil }) throws
        -> [KeySlotInfo]
    {
        try rekey(newPassword: newPassword, profile: profile, rewrapping: try rewraps(of: try authenticatedRecord(), except: [], keeping: keeping))
    }

    /// `rekey(newPassword:profile:)`, keeping the slots `rewraps` name: the new master key is
    /// wrapped for each under its slot key (a fresh salt), at the new key generation; every
    /// other slot is removed.
    func rekey(newPassword: borrowing SecureBytes, profile: KDFProfile?, rewrapping rewraps: [SlotRewrap]) throws -> [KeySlotInfo] {
        try requireFileKeychain("re-keying with a password")
        let oldKeys = try allKeys()
        let before = try authenticatedRecord()
        var kdf = KDFParameters(algorithm: before.kdfAlgorithm, opslimit: before.kdfOpslimit, memlimit: before.kdfMemlimit, salt: [])
        if let profile { kdf = KDFParameters(profile: profile) }
        kdf.salt = Sodium.randomBytes(KDFParameters.saltBytes)
        let kek = try kdf.deriveKey(password: newPassword)
        let master = try KeyHierarchy.newMasterKey()
        var record = before
        record.keyGeneration = before.keyGeneration &+ 1
        record.kdfAlgorithm = kdf.algorithm
        record.kdfOpslimit = kdf.opslimit
        record.kdfMemlimit = kdf.memlimit
        record.kdfSalt = kdf.salt
        record.wrappedMasterKey = AEAD.seal(master.bytes, key: kek, ad: AssociatedData.masterKeyWrap(record))
        let keptIDs = Set(rewraps.map(\.slot.id))
        let removed = try before.slots.filter { !keptIDs.contains($0.id) }.map(KeySlotInfo.init)
        record.slots = []
        for slot in before.slots {
            guard let rewrap = rewraps.first(where: { $0.slot == slot }) else { continue }
            let ad = SlotWrap.associatedData(
                kind: slot.kind, keychainID: record.keychainID, keyGeneration: record.keyGeneration, slotID: slot.id, created: slot.created,
                salt: rewrap.salt)
            let wrap = AEAD.seal(master.bytes, key: rewrap.key, ad: ad)
            let fields =
                switch slot.kind {
                case .recovery: RecoverySlot(salt: rewrap.salt, wrappedMasterKey: wrap).fields
                case .tpm2: TPM2Slot(sealing: try rewrap.sealing ?? TPM2Slot(fields: slot.fields).sealing, salt: rewrap.salt, wrappedMasterKey: wrap).fields
                }
            record.slots.append(KeySlotRow(id: slot.id, kind: slot.kind, created: slot.created, fields: fields))
        }
        let newKeys = try KeyHierarchy(
            master: master, keychainID: record.keychainID, keyGeneration: record.keyGeneration,
            blindKeyIDs: Schema.blindKeyIDs)
        let generation = try store.transaction(write: true) {
            let current = try store.readKeychainRecord()
            var state = try store.readState()
            // The header MAC covers the record (format 5): an edited one is tampering; one
            // another kc changed with its own password change is not ours to replace.
            try checkHeader(current, state, keys: oldKeys)
            guard current == before else {
                throw KeychainError(
                    errSecInteractionNotAllowed, "\(path) was changed by another process meanwhile; nothing was written",
                    hint: "unlock again and retry")
            }
            guard state.minWriterVersion <= Keychain.formatVersion else {
                throw KeychainError(
                    errSecReadOnly, "\(path) was last written by a newer kc (writer version \(state.minWriterVersion))",
                    hint: "upgrade kc")
            }
            let oldCodec = RowCodec(keys: oldKeys), newCodec = RowCodec(keys: newKeys)
            var rows: [ItemRow] = []
            try store.forEachRow(.all, includeData: true) { row in
                rows.append(row)
                return true
            }
            // The rows must be exactly those the header vouches for: a re-key must never
            // launder a deleted, inserted, replayed or edited row into a freshly sealed one.
            try verifyRows(oldKeys, state)
            state.generation += 1
            var acc = [UInt8](repeating: 0, count: 32)
            for row in rows {
                let item = try oldCodec.open(row)
                let new = try oldCodec.rekey(row, attributes: item.attributes, to: newCodec, rowVersion: state.generation)
                try store.replace(new)
                Header.xor(&acc, try Header.term(new, keys: newKeys))
            }
            state.accumulator = acc
            state.mac = Header.mac(state, record: record, keys: newKeys)
            try store.writeKeychainRecord(record)
            try store.writeState(state)
            return state.generation
        }
        // Only after the commit (see `write`).
        highestGeneration = max(highestGeneration, generation)
        keys = newKeys
        openedRecord = record
        // Every row changed: the next read verifies the file afresh under the new keys.
        rowLedger.invalidate()
        verifiedStamp = nil
        try store.compactLog()
        return removed
    }
}
