/// The authenticated header state (`docs/format.md` §6): a generation counter, the item
/// count and an XOR accumulator of keyed hashes of (item id, row version, class), under a
/// MAC with the versions and settings. Deleted, inserted or replayed rows change the
/// accumulator and are detected at open and by `verify()`.
enum Header {
    static func mac(_ s: StateRecord, record: KeychainRecord, keys: KeyHierarchy) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.label(AssociatedData.headerLabel)
        w.u32(record.formatVersion)
        w.u32(s.minWriterVersion)
        w.lengthPrefixed(record.keychainID)
        w.u32(record.keyGeneration)
        w.u64(s.generation)
        w.u64(s.itemCount)
        w.lengthPrefixed(s.accumulator)
        w.u64(s.idleTimeout)
        w.u64(s.maxTimeout)
        return Hashing.mac(w.bytes, key: keys.header)
    }

    /// The accumulator term of one row (format 2): every stored column of the row, its
    /// place in insertion order included, so that editing any of them is detected by the
    /// next integrity scan. The row must have been read with its data.
    /// - Throws: errSecInternalError for a row read without its data.
    static func term(_ row: ItemRow, keys: KeyHierarchy) throws -> [UInt8] {
        if let data = row.data, data.isEmpty {
            throw KeychainError(errSecInternalError, "an accumulator term needs the row's data")
        }
        var content = ByteWriter(capacity: 64 + row.wrappedKey.count + row.metadata.count + (row.data?.count ?? 0))
        content.u8(row.data == nil ? 0 : 1)
        content.lengthPrefixed(row.wrappedKey)
        content.lengthPrefixed(row.metadata)
        content.lengthPrefixed(row.data ?? [])
        var w = ByteWriter(capacity: 128)
        w.label(AssociatedData.accumulatorLabel)
        w.lengthPrefixed(row.itemID)
        w.u64(row.rowVersion)
        w.lengthPrefixed(Array(row.classCode.utf8))
        w.u64(UInt64(bitPattern: row.seq))
        w.raw(AssociatedData.indexDigest(row))
        w.raw(Hashing.blake2b(content.bytes, length: 32))
        return Hashing.mac(w.bytes, key: keys.set)
    }

    /// The accumulator term of format 1, which covered only (item id, row version, class):
    /// read once, to check a format-1 file before it is migrated.
    static func termV1(_ row: ItemRow, keys: KeyHierarchy) -> [UInt8] {
        var w = ByteWriter(capacity: 48)
        w.label(AssociatedData.accumulatorLabelV1)
        w.lengthPrefixed(row.itemID)
        w.u64(row.rowVersion)
        w.lengthPrefixed(Array(row.classCode.utf8))
        return Hashing.mac(w.bytes, key: keys.set)
    }

    static func xor(_ acc: inout [UInt8], _ term: [UInt8]) {
        for i in 0..<min(acc.count, term.count) { acc[i] ^= term[i] }
    }
}

extension Keychain {
    /// Checks the header MAC, that the keys in hand belong to this file, and that the
    /// generation has not gone back. - Throws: errSecDecode, errSecInteractionNotAllowed.
    func checkHeader(_ record: KeychainRecord, _ state: StateRecord, keys: KeyHierarchy) throws {
        guard record.keychainID == keys.keychainID, record.keyGeneration == keys.keyGeneration else {
            lock()
            throw KeychainError(errSecInteractionNotAllowed,
                                "the keychain \(path) was re-keyed or replaced since it was unlocked; nothing was written",
                                hint: "unlock it again")
        }
        guard state.accumulator.count == 32,
              Sodium.constantTimeEqual(Header.mac(state, record: record, keys: keys), state.mac) else {
            throw KeychainError(errSecDecode, "the header of \(path) fails its integrity check: the file was tampered with")
        }
        guard state.generation >= highestGeneration else {
            throw KeychainError(errSecDecode, "\(path) went back from generation \(highestGeneration) to \(state.generation): an older copy of the file was restored",
                                hint: "if you restored a backup on purpose, stop the agent (kc agent --stop) and unlock again to accept it")
        }
        highestGeneration = state.generation
    }

    /// Runs `body` in a read transaction after checking the header, and the rows too when
    /// the store changed under this process since it last checked them.
    func read<T>(_ body: (KeyHierarchy, StateRecord) throws -> T) throws -> T {
        let keys = try unlockedKeys()
        return try store.transaction(write: false) {
            let record = try store.readKeychainRecord()
            let state = try store.readState()
            try checkHeader(record, state, keys: keys)
            try verifyIfChanged(keys, state)
            return try body(keys, state)
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): re-reads and checks the
    /// header (and the rows, when the store changed under this process), hands `body` the
    /// next generation, then writes the new count, accumulator and MAC. Any throw rolls
    /// everything back. The generation this process remembers moves only once the commit
    /// has succeeded: a commit that fails (disk full) rolls the file back, and remembering
    /// its generation would make the next read look like a restored older copy. Its own
    /// commit never costs a scan.
    func write<T>(_ body: (KeyHierarchy, inout StateRecord) throws -> T) throws -> T {
        let keys = try unlockedKeys()
        let (result, generation, inside) = try store.transaction(write: true) {
            let record = try store.readKeychainRecord()
            var state = try store.readState()
            try checkHeader(record, state, keys: keys)
            guard state.minWriterVersion <= Keychain.formatVersion else {
                throw KeychainError(errSecReadOnly, "\(path) was last written by a newer kc (writer version \(state.minWriterVersion))",
                                    hint: "upgrade kc, or restart an old agent")
            }
            try verifyIfChanged(keys, state)
            state.generation += 1
            let result = try body(keys, &state)
            state.mac = Header.mac(state, record: record, keys: keys)
            try store.writeState(state)
            return (result, state.generation, try store.changeStamp())
        }
        highestGeneration = max(highestGeneration, generation)
        noteOwnCommit(inside)
        return result
    }

    /// After this process's own commit: the connection's part of the stamp taken inside the
    /// transaction (a commit by anyone else after ours still shows as a change), the files'
    /// part as they are now that ours is written.
    func noteOwnCommit(_ inside: ChangeStamp) {
        guard let now = try? store.changeStamp() else {
            verifiedStamp = nil
            return
        }
        verifiedStamp = ChangeStamp(others: inside.others, files: now.files)
    }

    /// Verifies every row when the store changed since this process last did (another
    /// process wrote, or someone wrote into the file): the agent holds a keychain for hours,
    /// and must not answer from rows put back meanwhile.
    func verifyIfChanged(_ keys: KeyHierarchy, _ state: StateRecord) throws {
        let stamp = try store.changeStamp()
        guard stamp != verifiedStamp else { return }
        try verifyRows(keys, state)
        verifiedStamp = stamp
    }

    /// Checks every row, read from the table itself, against the item count and the
    /// accumulator of the (already authenticated) header. O(n) in the size of the store.
    /// - Throws: errSecDecode when any column of any row was edited, or rows were deleted,
    ///   inserted or replayed.
    func verifyRows(_ keys: KeyHierarchy, _ state: StateRecord, formatVersion: UInt32 = Keychain.formatVersion) throws {
        var acc = [UInt8](repeating: 0, count: 32)
        var count: UInt64 = 0
        var newest: UInt64 = 0
        try store.forEachRow(.all, includeData: true) { row in
            Header.xor(&acc, formatVersion == 1 ? Header.termV1(row, keys: keys) : try Header.term(row, keys: keys))
            count += 1
            newest = max(newest, row.rowVersion)
            return true
        }
        guard count == state.itemCount, newest <= state.generation,
              Sodium.constantTimeEqual(acc, state.accumulator) else {
            let what = count == state.itemCount
                ? "rows or their columns were edited, replayed or swapped"
                : "\(count) rows where the header counts \(state.itemCount): rows were deleted or put back"
            throw firstRowThatDoesNotOpen(keys) ?? KeychainError(errSecDecode, "the items of \(path) do not match its authenticated header (\(what))",
                                                                 hint: "restore the keychain from a backup")
        }
    }

    /// After a failed integrity scan, the first row that does not open at its place (its
    /// data key, metadata or data fails to decrypt, or its index columns do not match its
    /// attributes), named by its position and persistent reference; nil when every row
    /// opens (then rows were deleted, put back or replayed whole).
    func firstRowThatDoesNotOpen(_ keys: KeyHierarchy) -> KeychainError? {
        let codec = RowCodec(keys: keys)
        var position = 0
        var found: KeychainError?
        try? store.forEachRow(.all, includeData: true) { row in
            position += 1
            do {
                _ = try codec.open(row)
                _ = try codec.openData(row)
                return true
            } catch let error as KeychainError {
                found = KeychainError(errSecDecode, "item \(position) (reference \(Keychain.hex(Array(row.classCode.utf8) + row.itemID))) of \(path) does not open at its place: \(error.message)",
                                      hint: "restore the keychain from a backup")
                return false
            }
        }
        return found
    }

    /// Checks the whole file as a fresh open does: header MAC, then every stored column of
    /// every row against the item count and accumulator. O(n) in the number of items.
    /// - Throws: errSecDecode when rows were deleted, inserted, replayed or edited.
    public func verify() throws {
        verifiedStamp = nil
        try read { _, _ in }
    }

    /// Changes the stored auto-lock timeouts (seconds).
    public func setTimeouts(idle: UInt64, maximum: UInt64) throws {
        guard (1...Keychain.maxTimeout).contains(idle), (1...Keychain.maxTimeout).contains(maximum) else {
            throw KeychainError(errSecParam, "timeouts are 1 to \(Keychain.maxTimeout) seconds (one year)")
        }
        try write { _, state in
            state.idleTimeout = idle
            state.maxTimeout = maximum
        }
    }
}
