import KeychainCore
import TeamCore

/// Catching up (`docs/design.md`, "A read is one statement"): the view brought from its head
/// to the server's, every entry since linked (`LogChain`), signed (`checkWriter`,
/// `verifyRosterEntry`), dated (`checkTime`) and its row changes applied to the ledger
/// (`apply`). All or nothing: the ledger rows it changes are journalled and put back when an
/// entry fails.
extension TeamAuthority {
    /// Brings the view up to the server's head: checks and applies each entry since. All or
    /// nothing: when an entry fails, the view stays as it was before the call. A view left
    /// halfway (a re-key entry applied, its rows not yet scanned and its keys not yet handed
    /// back) would accept the old rows and keep this member sealing under the master key a
    /// removed member still holds.
    /// - Returns: `keys`, or the new keys after a re-key.
    /// - Parameters:
    ///   - seen: the head a lookup read in the same statement as its rows (the catch-up
    ///     then goes exactly there); nil: read the head now, inside the caller's snapshot.
    ///   - mayRescan: whether a re-key among the entries may be followed by the scan of
    ///     every row it needs; that scan must see the rows as of the head, so outside a
    ///     snapshot (`mayRescan` false) the catch-up throws `NeedsSnapshot` instead.
    ///   - mark: a generation whose entry's hash, as this walk finds it, is left in
    ///     `markedHash` (nil when the walk does not pass it).
    func catchUp(_ keys: KeyHierarchy, to seen: TeamHead? = nil, mayRescan: Bool = true, mark: UInt64? = nil) throws -> KeyHierarchy {
        // Keys of another key generation than the view's would have this member read, or
        // seal, under a master key the view no longer vouches for (after a removal, the one
        // the removed member holds): a caller that did not adopt a re-key's new keys.
        guard keys.keyGeneration == keyGeneration else {
            throw KeychainError(
                errSecInternalError,
                "\(label): an operation used the keys of key generation \(keys.keyGeneration) where the verified view is at \(keyGeneration); nothing was read or written",
                hint: "try again; please report this")
        }
        // The ledger is not copied (at 100,000 rows a copy per read cost milliseconds): the
        // rows `apply` changes are journalled and put back. A rescan assigns the ledger
        // last, after which nothing throws.
        let saved = (generation, head, keyGeneration, roster, rosterEntryHash, commitment, set, lastTime)
        let savedHistory = history
        let savedWalk = walked
        ledgerJournal = []
        journalling = true
        defer { journalling = false; ledgerJournal = [] }
        do {
            markedHash = nil
            return try catchUpEntries(keys, to: seen, mayRescan: mayRescan, mark: mark)
        } catch {
            (generation, head, keyGeneration, roster, rosterEntryHash, commitment, set, lastTime) = saved
            history = savedHistory
            walked = savedWalk
            for (itemID, hash) in ledgerJournal.reversed() { ledger[itemID] = hash }
            throw error
        }
    }

    /// What a catch-up carries from entry to entry: the keys in force, and the re-key among
    /// the entries, if any (after it the rows are scanned, not applied).
    struct CatchUpKeys {
        var keys: KeyHierarchy
        var rescan: LogEntry?
        /// The roster entry whose key generation's master key this member must still open:
        /// a re-key it was left out of (a removal), when a later entry may add it back.
        var unopened: LogEntry?
    }

    /// `catchUp`'s work, which may leave the view halfway when it throws.
    private func catchUpEntries(_ keys: KeyHierarchy, to seen: TeamHead?, mayRescan: Bool, mark: UInt64?) throws -> KeyHierarchy {
        // A token past `--expires` opens nothing, in a running agent as at a first open.
        if let me, !me.isValid(at: Self.now) { throw expired(me) }
        guard let serverHead = try seen ?? tables.head() else {
            throw serverError("the team keychain is gone from the server")
        }
        let ahead = try headsToPass(to: serverHead, from: .view)
        if serverHead.generation == generation { return keys }
        let entries = try tables.entries(after: generation, through: serverHead.generation)
        guard UInt64(entries.count) == serverHead.generation - generation else {
            throw serverError(
                "\(serverHead.generation - generation - UInt64(entries.count)) entries between generation \(generation) and \(serverHead.generation) are missing: the server hid them"
            )
        }
        var chain = LogChain(from: .view, label: label, generation: generation, head: head, seen: ahead, walked: walked)
        var current = CatchUpKeys(keys: keys)
        var last: LogEntry?
        let now = Self.now
        for (g, bytes) in entries {
            let linked = try chain.link(bytes, at: g)
            if g == mark { markedHash = linked.hash }
            try take(linked, into: &current, mayRescan: mayRescan)
            let e = linked.entry
            try checkTime(e, after: lastTime, now: now)
            generation = g
            head = linked.hash
            lastTime = e.time
            last = e
        }
        walked = chain.walked
        try chain.ends(at: serverHead)
        // Whether this member was removed is decided at the head, not at the entry that
        // removed it: an admin may have added the same device back since.
        guard me != nil, current.unopened == nil else { throw removal() }
        if current.rescan != nil, let last {
            try scanRows(keys: current.keys, expectedDigest: last.setDigest, expectedCount: last.count, at: last.generation)
        }
        saveCheckpoint()
        return current.keys
    }

    /// Checks one linked entry's signer and applies it to the view. After a re-key every
    /// row changed without a change list: the ledger is rebuilt by the scan after the walk,
    /// against the last entry's set hash, so the entries after the re-key are checked for
    /// their signer only.
    private func take(_ linked: ChainedEntry, into current: inout CatchUpKeys, mayRescan: Bool) throws {
        let e = linked.entry, g = linked.generation
        switch e.kind {
        case .items:
            try checkWriter(e, roster: roster, keyGeneration: keyGeneration, after: lastTime)
            guard current.rescan == nil else { return }
            try apply(e.changes, at: g)
            guard holdsRows(of: e) else {
                throw tampered("entry \(g)'s set hash does not match its changes: the log was edited")
            }
        case .heartbeat:
            try checkWriter(e, roster: roster, keyGeneration: keyGeneration, after: lastTime)
            guard current.rescan == nil else { return }
            guard holdsRows(of: e) else { throw tampered("heartbeat \(g) names another set of rows") }
        case .roster:
            let signed = try verifyRosterEntry(linked, under: roster, following: rosterEntryHash, from: .view)
            history.take(e, from: roster, to: signed.roster)
            roster = signed.roster
            rosterEntryHash = linked.hash
            try takeKeys(of: e, into: &current, mayRescan: mayRescan)
        }
    }

    /// A roster entry's keys: a re-key opens the next key generation's master key (and the
    /// rows are scanned after the walk); any other roster entry keeps the keys and the rows.
    /// This member must be in the roster at the head, not at each entry: an entry (its
    /// signature checked) that left it out may be followed by one that adds the same device
    /// back, whose master-key wrap is then opened. `catchUpEntries` decides at the head,
    /// where the error says who removed it and when (`removed`).
    private func takeKeys(of e: LogEntry, into current: inout CatchUpKeys, mayRescan: Bool) throws {
        let g = e.generation
        if e.rekeyed {
            guard mayRescan else { throw NeedsSnapshot() }
            guard e.keyGeneration == keyGeneration + 1 else { throw serverError("roster entry \(g) skips a key generation") }
            keyGeneration = e.keyGeneration
            commitment = e.masterKeyCommitment
            current.rescan = e
            current.unopened = e
        } else {
            guard e.keyGeneration == keyGeneration, e.masterKeyCommitment == commitment,
                current.rescan != nil || holdsRows(of: e)
            else {
                throw serverError("roster entry \(g) changes the keys or rows without a re-key")
            }
        }
        // Left out: nothing to open (yet). In: the wrap of the re-key, or of the admin who
        // added this device back after it.
        if me != nil, current.unopened != nil {
            current.keys = try openMasterKey(generation: keyGeneration, signedBy: e)
            current.unopened = nil
        }
    }

    /// The error for this member, which the verified roster at the head leaves out: a view
    /// this member opened had it in the roster, so a verified entry since removed it.
    private func removal() -> KeychainError {
        guard let change = history.removed[member.memberID] else {
            return KeychainError(errSecAuthFailed, "this device is not a member of \(label)", hint: "ask an admin to add it again")
        }
        return removed(change, asOf: generation)
    }

    /// Catches up across a re-key in a REPEATABLE READ snapshot: a write's or an admin's
    /// READ COMMITTED transaction cannot scan every row as of the re-key's head (a commit
    /// during the scan would make a genuine row look tampered with). Answers the keys to
    /// go on with, adopted by the keychain.
    func catchUpInSnapshot(_ keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws -> KeyHierarchy {
        let current = try store.transaction(write: false) { try catchUp(keys) }
        if current !== keys { adopt(current) }
        return current
    }

    /// Refuses a head older than `maxStaleness`: a server that keeps showing an old head
    /// (a freeze) cannot forge a newer signed entry, so the age of the newest one shows it.
    func checkFreshness() throws {
        let now = Self.now
        guard maxStaleness > 0, now > lastTime, now - lastTime > maxStaleness else { return }
        throw serverError(
            "the newest signed entry is \(now - lastTime) s old, more than the \(maxStaleness) s allowed (KC_TEAM_MAX_STALENESS): the server may be freezing the keychain at an old head, or no writer has sent a heartbeat"
        )
    }
}
