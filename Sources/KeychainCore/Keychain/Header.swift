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

    /// The accumulator term of one row.
    static func term(itemID: [UInt8], classCode: String, rowVersion: UInt64, keys: KeyHierarchy) -> [UInt8] {
        var w = ByteWriter(capacity: 48)
        w.label(AssociatedData.accumulatorLabel)
        w.lengthPrefixed(itemID)
        w.u64(rowVersion)
        w.lengthPrefixed(Array(classCode.utf8))
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

    /// Runs `body` in a read transaction after checking the header.
    func read<T>(_ body: (KeyHierarchy, StateRecord) throws -> T) throws -> T {
        let keys = try unlockedKeys()
        return try store.transaction(write: false) {
            let record = try store.readKeychainRecord()
            let state = try store.readState()
            try checkHeader(record, state, keys: keys)
            return try body(keys, state)
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): re-reads and checks the
    /// header, hands `body` the next generation, then writes the new count, accumulator and
    /// MAC. Any throw rolls everything back. The generation this process remembers moves
    /// only once the commit has succeeded: a commit that fails (disk full) rolls the file
    /// back, and remembering its generation would make the next read look like a restored
    /// older copy.
    func write<T>(_ body: (KeyHierarchy, inout StateRecord) throws -> T) throws -> T {
        let keys = try unlockedKeys()
        let (result, generation) = try store.transaction(write: true) {
            let record = try store.readKeychainRecord()
            var state = try store.readState()
            try checkHeader(record, state, keys: keys)
            guard state.minWriterVersion <= Keychain.formatVersion else {
                throw KeychainError(errSecReadOnly, "\(path) was last written by a newer kc (writer version \(state.minWriterVersion))",
                                    hint: "upgrade kc, or restart an old agent")
            }
            state.generation += 1
            let result = try body(keys, &state)
            state.mac = Header.mac(state, record: record, keys: keys)
            try store.writeState(state)
            return (result, state.generation)
        }
        highestGeneration = max(highestGeneration, generation)
        return result
    }

    /// Checks the whole file: header MAC, then every row's (id, version, class) against
    /// the item count and accumulator. O(n) in the number of items.
    /// - Throws: errSecDecode when rows were deleted, inserted or replayed.
    public func verify() throws {
        try read { keys, state in
            var acc = [UInt8](repeating: 0, count: 32)
            var count: UInt64 = 0
            var newest: UInt64 = 0
            try store.forEachVersion { id, classCode, version in
                Header.xor(&acc, Header.term(itemID: id, classCode: classCode, rowVersion: version, keys: keys))
                count += 1
                newest = max(newest, version)
            }
            guard count == state.itemCount, newest <= state.generation,
                  Sodium.constantTimeEqual(acc, state.accumulator) else {
                throw KeychainError(errSecDecode,
                                    "the items of \(path) do not match its header (\(count) rows, header says \(state.itemCount)): rows were deleted, inserted or replayed",
                                    hint: "restore the keychain from a backup")
            }
        }
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
