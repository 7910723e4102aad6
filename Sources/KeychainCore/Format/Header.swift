/// The authenticated header state (`docs/format.md` §6): a generation counter, the item
/// count and an XOR accumulator of keyed hashes of (item id, row version, class), under a
/// MAC with the versions, the settings and (format 5) the whole password record. Deleted,
/// inserted or replayed rows change the accumulator and are detected at open and by
/// `verify()`; a password record spliced in from another copy fails the MAC.
enum Header {
    /// The header MAC of a file of `record`'s format: format 5's covers every field of the
    /// password record, every wrap of the master key and its KDF fields included
    /// (`KeychainRecord.authenticatedBytes`), then the state:
    /// label("kc/v5/header") ‖ lp(record) ‖ u32 min_writer_version ‖ u64 generation ‖
    /// u64 item_count ‖ lp(accumulator) ‖ u64 idle_timeout ‖ u64 max_timeout.
    /// Formats 1–4 used `macV1` (read once more, to check a file before its migration).
    static func mac(_ s: StateRecord, record: KeychainRecord, keys: KeyHierarchy) -> [UInt8] {
        guard record.formatVersion >= 5 else { return macV1(s, record: record, keys: keys) }
        let covered = record.authenticatedBytes
        var w = ByteWriter(capacity: 96 + covered.count)
        w.label(AssociatedData.headerLabel)
        w.lengthPrefixed(covered)
        w.u32(s.minWriterVersion)
        w.u64(s.generation)
        w.u64(s.itemCount)
        w.lengthPrefixed(s.accumulator)
        w.u64(s.idleTimeout)
        w.u64(s.maxTimeout)
        return Hashing.mac(w.bytes, key: keys.header)
    }

    /// The header MAC of formats 1–4, which covered the record's format, keychain id and
    /// key generation but not its wrapped master key or KDF fields (issue 29).
    static func macV1(_ s: StateRecord, record: KeychainRecord, keys: KeyHierarchy) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.label(AssociatedData.headerLabelV1)
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
        writePlace(of: row, to: &w)
        w.raw(Hashing.blake2b(content.bytes, length: 32))
        return Hashing.mac(w.bytes, key: keys.set)
    }

    /// The fields that put a row in its place, shared by its accumulator term and its
    /// ledger digest: lp(item id) ‖ u64 row version ‖ lp(class) ‖ u64 seq ‖ index digest.
    private static func writePlace(of row: ItemRow, to w: inout ByteWriter) {
        w.lengthPrefixed(row.itemID)
        w.u64(row.rowVersion)
        w.lengthPrefixed(Array(row.classCode.utf8))
        w.u64(UInt64(bitPattern: row.seq))
        w.raw(AssociatedData.indexDigest(row))
    }

    /// The digest by which an open keychain recognises a row it verified (`RowLedger`):
    /// every column but the data's bytes, which need no entry of their own (the data is
    /// sealed under the row's data key, which the wrapped key covered here authenticates,
    /// and every update seals under a fresh one). Computable for rows read without data.
    static func rowDigest(_ row: ItemRow, keys: KeyHierarchy) -> RowDigest {
        var w = ByteWriter(capacity: 96 + row.wrappedKey.count + row.metadata.count)
        w.label(AssociatedData.rowDigestLabel)
        writePlace(of: row, to: &w)
        w.u8(row.data == nil ? 0 : 1)
        w.lengthPrefixed(row.wrappedKey)
        w.lengthPrefixed(row.metadata)
        let d = Hashing.mac(w.bytes, key: keys.set, length: 16)
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(d[i]); low = low << 8 | UInt64(d[8 + i]) }
        return RowDigest(high: high, low: low)
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
    /// generation has not gone back. Only a migration (`migrating`) accepts a record of an
    /// older format, whose MAC did not cover the whole password record: anywhere else a
    /// format that went back is a header spliced in from an older file.
    /// - Throws: errSecDecode, errSecInteractionNotAllowed.
    func checkHeader(_ record: KeychainRecord, _ state: StateRecord, keys: KeyHierarchy, migrating: Bool = false) throws {
        guard record.formatVersion == Keychain.formatVersion || (migrating && record.formatVersion < Keychain.formatVersion) else {
            throw KeychainError(
                errSecDecode,
                "the header of \(path) says format \(record.formatVersion) where this keychain is format \(Keychain.formatVersion): the file was tampered with",
                hint: "restore the keychain from a backup")
        }
        guard record.keychainID == keys.keychainID, record.keyGeneration == keys.keyGeneration else {
            lock()
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the keychain \(path) was re-keyed or replaced since it was unlocked; nothing was written",
                hint: "unlock it again")
        }
        guard state.accumulator.count == 32,
            Sodium.constantTimeEqual(Header.mac(state, record: record, keys: keys), state.mac)
        else {
            throw KeychainError(errSecDecode, "the header of \(path) fails its integrity check: the file was tampered with")
        }
        guard state.generation >= highestGeneration else {
            throw KeychainError(
                errSecDecode, "\(path) went back from generation \(highestGeneration) to \(state.generation): an older copy of the file was restored",
                hint: "if you restored a backup on purpose, stop the agent (kc agent --stop) and unlock again to accept it")
        }
        highestGeneration = state.generation
    }

    /// Runs `body` in a read transaction after checking the header, and the rows too when
    /// the store changed under this process since it last checked them. With an authority
    /// (a team keychain), `body` may run twice (`HeaderAuthority.read`): it starts from
    /// nothing each time.
    func read<T>(_ body: (KeyHierarchy, StateRecord) throws -> T) throws -> T {
        let keys = try unlockedKeys()
        if let authority {
            return try authority.read(keys: keys, adopt: { self.keys = $0 }, body)
        }
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
        try write(replacingRecord: nil, body)
    }

    /// `write`, which also replaces the password record with what `replacingRecord` makes
    /// of the one in the file (a password change): the new record is written in the same
    /// transaction, and the header MAC covers it.
    func write<T>(replacingRecord: ((KeychainRecord) throws -> KeychainRecord)?, _ body: (KeyHierarchy, inout StateRecord) throws -> T) throws -> T {
        let keys = try allKeys()
        if let authority {
            return try authority.write(keys: keys, adopt: { self.keys = $0 }, body)
        }
        rowLedger.rollback()
        defer { rowLedger.rollback() }   // a no-op after a commit
        let (result, generation, inside) = try store.transaction(write: true) {
            let record = try store.readKeychainRecord()
            var state = try store.readState()
            try checkHeader(record, state, keys: keys)
            guard state.minWriterVersion <= Keychain.formatVersion else {
                throw KeychainError(
                    errSecReadOnly, "\(path) was last written by a newer kc (writer version \(state.minWriterVersion))",
                    hint: "upgrade kc, or restart an old agent")
            }
            try verifyIfChanged(keys, state)
            state.generation += 1
            let result = try body(keys, &state)
            let written = try replacingRecord?(record) ?? record
            state.mac = Header.mac(state, record: written, keys: keys)
            if written != record { try store.writeKeychainRecord(written) }
            try store.writeState(state)
            return (result, state.generation, try store.changeStamp())
        }
        highestGeneration = max(highestGeneration, generation)
        rowLedger.commit()
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
        guard store.isStillTheOpenedFile() else {
            lock()
            throw KeychainError(
                errSecInteractionNotAllowed,
                "the keychain file \(path) was replaced or removed while it was open; nothing was read or written",
                hint: "unlock it again")
        }
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
        var digests = Set<RowDigest>(minimumCapacity: Int(min(state.itemCount, 1 << 24)))
        let foldKey = IndexFold.key(keys)
        var expected = IndexFold()
        try store.forEachRow(.all, includeData: true) { row in
            Header.xor(&acc, formatVersion == 1 ? Header.termV1(row, keys: keys) : try Header.term(row, keys: keys))
            digests.insert(Header.rowDigest(row, keys: keys))
            expected.add(row: row, key: foldKey)
            count += 1
            newest = max(newest, row.rowVersion)
            return true
        }
        guard count == state.itemCount, newest <= state.generation,
            Sodium.constantTimeEqual(acc, state.accumulator)
        else {
            let what =
                count == state.itemCount
                ? "rows or their columns were edited, replayed or swapped"
                : "\(count) rows where the header counts \(state.itemCount): rows were deleted or put back"
            throw firstRowThatDoesNotOpen(keys)
                ?? KeychainError(
                    errSecDecode, "the items of \(path) do not match its authenticated header (\(what))",
                    hint: "restore the keychain from a backup")
        }
        // The rows are the header's; now every index must hold exactly the rows' entries.
        var found = IndexFold()
        for index in StoreIndex.all {
            try store.forEachIndexEntry(index) { seq, value in found.add(index, seq: seq, value: value, key: foldKey) }
        }
        let stale = found.differences(from: expected)
        guard stale.isEmpty else {
            throw KeychainError(
                errSecDecode,
                "\(stale.count) index\(stale.count == 1 ? "" : "es") of \(path) do not match its rows (an index was edited, swapped or left stale): the file was tampered with",
                hint: "restore the keychain from a backup")
        }
        if formatVersion == Keychain.formatVersion { rowLedger.reset(to: digests) }
    }

    /// Refuses a row that the last integrity scan (or this process's own write) did not
    /// vouch for: called on every row a lookup reads, before its metadata is trusted.
    /// - Throws: errSecDecode; the next request then verifies the whole file again.
    func checkRow(_ row: ItemRow, keys: KeyHierarchy) throws {
        if let authority { return try authority.checkRow(row, keys: keys) }
        guard rowLedger.contains(Header.rowDigest(row, keys: keys)) else {
            let verifiedBefore = rowLedger.isValid
            rowLedger.invalidate()
            verifiedStamp = nil
            throw KeychainError(
                errSecDecode,
                verifiedBefore
                    ? "an item of \(path) changed under the open keychain, and not through SQLite: the file was tampered with"
                    : "\(path) was read before it was verified",
                hint: "restore the keychain from a backup; kc verify names what is wrong")
        }
    }

    /// Counts a row change in the header's accumulator and, once the write commits, in
    /// the open keychain's ledger: `old` leaves, `new` arrives (either may be nil).
    func account(_ state: inout StateRecord, removing old: ItemRow?, adding new: ItemRow?, keys: KeyHierarchy) throws {
        if let authority { return try authority.account(removing: old, adding: new, keys: keys) }
        if let old {
            // The ledger vouched for every column of `old` but the data's bytes (its data key
            // authenticates them): open them before their hash leaves the accumulator, or
            // data edited since the last scan would leave an accumulator no file can match.
            if old.data != nil { _ = try RowCodec(keys: keys).openData(old) }
            Header.xor(&state.accumulator, try Header.term(old, keys: keys))
        }
        if let new { Header.xor(&state.accumulator, try Header.term(new, keys: keys)) }
        rowLedger.record(removing: old.map { Header.rowDigest($0, keys: keys) }, adding: new.map { Header.rowDigest($0, keys: keys) })
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
            } catch let error as KeychainError where isLockedOut(error) {
                return true   // locked: its class key is not held, so it cannot be judged here
            } catch let error as KeychainError {
                found = KeychainError(
                    errSecDecode,
                    "item \(position) (reference \(Keychain.hex(Array(row.classCode.utf8) + row.itemID))) of \(path) does not open at its place: \(error.message)",
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
        if let authority {
            keys = try authority.verifyAll(keys: try unlockedKeys())
            return
        }
        verifiedStamp = nil
        rowLedger.invalidate()
        try read { _, _ in }
    }

    /// Changes the stored auto-lock timeouts (seconds).
    public func setTimeouts(idle: UInt64, maximum: UInt64) throws {
        try requireFileKeychain("changing the stored auto-lock timeouts")
        guard (1...Keychain.maxTimeout).contains(idle), (1...Keychain.maxTimeout).contains(maximum) else {
            throw KeychainError(errSecParam, "timeouts are 1 to \(Keychain.maxTimeout) seconds (one year)")
        }
        try write { _, state in
            state.idleTimeout = idle
            state.maxTimeout = maximum
        }
    }
}
