extension Keychain {
    /// Checks a whole keychain and names what is wrong (`kc verify`): the storage engine's
    /// structures and the schema are kc's own, the header's MAC holds, every row opens at
    /// its place (its data key, metadata and data decrypt under their associated data, and
    /// its index columns match its attributes), and the rows, read from the table itself,
    /// match the header's item count and accumulator. O(n) decryptions.
    ///
    ///     let items = try keychain.check()
    ///
    /// - Returns: the number of items.
    /// - Throws: errSecDecode naming the first problem found; errSecInteractionNotAllowed
    ///   when locked (also when after-first-unlock items are still readable: the check
    ///   opens every item, so it needs every class key).
    public func check() throws -> Int {
        let keys = try allKeys()
        if authority != nil {
            // The signed log vouches for the rows; every one must also open at its place,
            // under the keys the verification answers (new ones when it met a re-key).
            try verify()
            let verified = try allKeys()
            if let problem = try store.transaction(write: false, { firstRowThatDoesNotOpen(verified) }) { throw problem }
            return try itemCount()
        }
        // A connection of its own, with an empty page cache: what is in the file now, not
        // what this process read from it earlier (the agent holds its connection for hours).
        guard let fresh = try store.freshConnection() else {
            lock()
            throw KeychainError(
                errSecInteractionNotAllowed, "the keychain file \(path) was replaced or removed while it was open",
                hint: "unlock it again")
        }
        let probe = Keychain(path: path, store: fresh, keys: keys)
        probe.highestGeneration = highestGeneration
        let count = try probe.checkHere()
        // The open keychain starts again from what was just checked.
        try verify()
        return count
    }

    /// `check()` on this keychain's own connection.
    private func checkHere() throws -> Int {
        let keys = try unlockedKeys()
        if let problem = try store.structuralProblems() {
            throw KeychainError(
                errSecDecode, "the storage of \(path) is damaged or was tampered with: \(problem)",
                hint: "restore the keychain from a backup")
        }
        return try store.transaction(write: false) {
            let record = try store.readKeychainRecord()
            let state = try store.readState()
            try checkHeader(record, state, keys: keys)
            if let problem = firstRowThatDoesNotOpen(keys) { throw problem }
            try verifyRows(keys, state)
            return Int(state.itemCount)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }
}
