import KeychainCore
import TeamCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Membership changes (`docs/team.md`, "Members, keys, roles"): an admin appends a roster
/// entry signed by itself, in the same transaction as the master-key wraps it delivers.
/// Removing a member re-keys: a new master key wrapped to the members who remain, every
/// item's data key re-wrapped and its metadata and blind indexes re-sealed under it; the
/// secrets' ciphertexts stay as they are (their data keys do not change).
extension TeamAuthority {
    /// Changes the roster as an admin: `change` gets the current roster and answers the new
    /// one. With `rekey`, a new master key and key generation (for a removal); without, the
    /// current master key is delivered to members `change` added.
    /// - Parameter adopt: called with the new keys after a re-key (the keychain's).
    /// - Returns: the roster entry written.
    @discardableResult
    func changeRoster(
        keys: KeyHierarchy, rekey: Bool, adopt: (KeyHierarchy) -> Void,
        _ change: (Roster) throws -> Roster
    ) throws -> LogEntry {
        let giveUp = Deadline.after(seconds: Self.busyTimeout)
        // The keys of the view, as `write` keeps them: a catch-up across a re-key opens new
        // ones, which every attempt after it starts from and the keychain adopts.
        var latest = keys
        while true {
            do {
                let committed = try store.transaction(write: true) {
                    try changeRosterOnce(&latest, rekey: rekey, adopt: adopt, change)
                }
                return try advance(past: committed, keys: latest, adopt: adopt)
            } catch is NeedsSnapshot {
                latest = try catchUpInSnapshot(latest, adopt: adopt)
            } catch is LostRace {
                guard Deadline.now < giveUp else {
                    throw KeychainError(
                        errSecNotAvailable, "\(label): other writers kept winning for \(Int(Self.busyTimeout)) s; nothing was changed", hint: "try again")
                }
                usleep(UInt32.random(in: 1_000...20_000))
            }
        }
    }

    /// A roster change committed: its entry and, after a re-key, the new keys and the rows'
    /// new ledger and set hash.
    struct RosterChange {
        var entry: LogEntry
        var rekeyed: (keys: KeyHierarchy, ledger: [[UInt8]: [UInt8]], set: LtHash)?
    }

    /// One attempt of `changeRoster`, inside its transaction: the view caught up (adopting
    /// the keys of a re-key), the keychain row locked and the next generation claimed, the
    /// rows re-sealed for a re-key, the master key delivered and the signed roster entry
    /// appended.
    /// - Throws: `LostRace` when another writer claimed the generation first.
    private func changeRosterOnce(
        _ latest: inout KeyHierarchy, rekey: Bool, adopt: (KeyHierarchy) -> Void,
        _ change: (Roster) throws -> Roster
    ) throws -> RosterChange {
        let current = try catchUp(latest, mayRescan: false)
        if current !== latest { adopt(current); latest = current }
        guard let me, me.role == .admin else {
            throw KeychainError(
                errSecReadOnly, "only an admin of \(label) changes its members; \(self.me?.name ?? "this device") is a \(self.me?.role.name ?? "non-member")")
        }
        // Every other member refuses a roster entry signed after its signer expired.
        guard me.isValid(at: nextEntryTime) else { throw expired(me) }
        guard try tables.lockForAdmin() != nil, try tables.claim(expectedGeneration: generation) else { throw LostRace() }
        let newRoster = try change(roster)
        guard newRoster.member(me.memberID)?.role == .admin || rekey else {
            throw KeychainError(errSecParam, "an admin cannot take away its own admin role this way")
        }
        let g = generation + 1
        var keyGen = keyGeneration
        var mk = try current.master()
        var commit = commitment
        var digest = set.digest
        var count = UInt64(ledger.count)
        var rekeyed: (keys: KeyHierarchy, ledger: [[UInt8]: [UInt8]], set: LtHash)?
        if rekey {
            keyGen += 1
            mk = try KeyHierarchy.newMasterKey()
            let target = try KeyHierarchy(master: mk, keychainID: keychainID, keyGeneration: keyGen, blindKeyIDs: Schema.blindKeyIDs)
            commit = MasterKeyDelivery.commitment(masterKey: mk, keychainID: keychainID, keyGeneration: keyGen)
            let (l, s) = try resealEveryRow(from: current, to: target, rowVersion: g)
            rekeyed = (target, l, s)
            digest = s.digest
            count = UInt64(l.count)
        }
        try deliver(mk, keyGeneration: keyGen, commitment: commit, to: newRoster, rekey: rekey)
        var e = LogEntry(
            kind: .roster, generation: g, previous: head, keyGeneration: keyGen, signer: member.memberID,
            time: nextEntryTime, roster: newRoster, masterKeyCommitment: commit, rekeyed: rekey,
            previousRoster: rosterEntryHash, setDigest: digest, count: count, rosterDigest: newRoster.digest)
        e.sign(keychainID: keychainID, with: member)
        try tables.append(
            generation: g, kind: Int16(LogEntry.Kind.roster.rawValue), entry: e.encoded, newHead: e.hash,
            keyGeneration: rekey ? keyGen : nil)
        return RosterChange(entry: e, rekeyed: rekeyed)
    }

    /// Delivers the master key `mk`: to every member of `newRoster` after a re-key, else to
    /// the members it adds; and keeps `kc_members` (a convenience nobody trusts) in step.
    private func deliver(_ mk: SymmetricKey, keyGeneration keyGen: UInt32, commitment commit: [UInt8], to newRoster: Roster, rekey: Bool) throws {
        let known = Set(roster.members.map(\.memberID))
        for m in newRoster.members where rekey || !known.contains(m.memberID) {
            let wrap = try MasterKeyDelivery.wrap(
                masterKey: mk, keychainID: keychainID, keyGeneration: keyGen, memberID: m.memberID,
                memberBoxKey: m.boxPublicKey, admin: member, commitment: commit)
            try tables.putWrap(keyGeneration: keyGen, memberID: m.memberID, sealed: wrap.sealed, signature: wrap.signature)
            try tables.putMember(m.memberID, record: m.encoded)
        }
        let remaining = Set(newRoster.members.map(\.memberID))
        for m in roster.members where !remaining.contains(m.memberID) { try tables.deleteMember(m.memberID) }
        if rekey { try tables.deleteWraps(keyGeneration: keyGeneration) }
    }

    /// Moves the view past the roster change this process committed and records it in the
    /// checkpoint (`recordCommittedChange`).
    /// - Returns: the roster entry written.
    private func advance(past committed: RosterChange, keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws -> LogEntry {
        let entry = committed.entry
        if let newRoster = entry.roster { history.take(entry, from: roster, to: newRoster) }
        roster = entry.roster ?? roster
        rosterEntryHash = entry.hash
        keyGeneration = entry.keyGeneration
        commitment = entry.masterKeyCommitment
        generation = entry.generation
        head = entry.hash
        lastTime = entry.time
        walked.append(entry.hash, at: entry.generation)
        if let rekeyed = committed.rekeyed {
            ledger = rekeyed.ledger
            set = rekeyed.set
            adopt(rekeyed.keys)
        }
        try recordCommittedChange(keys: committed.rekeyed?.keys ?? keys, adopt: adopt)
        return entry
    }

    /// How many rows a re-key writes per statement (`PostgresItemStore.replaceResealed`):
    /// a few megabytes of parameters, few enough round trips not to matter.
    static let resealBatch = 4_096

    /// Re-seals every row under `target` inside the admin's transaction and answers the new
    /// ledger and set hash. Every row is first checked against the ledger, as any read
    /// checks it; its metadata is opened and checked, its data key re-wrapped and its
    /// metadata and fingerprints re-sealed on every core (`RowResealer`), and the new rows
    /// are written in batches of `resealBatch`, a statement each. The data's ciphertext
    /// is carried over unchanged: it is neither fetched nor written.
    private func resealEveryRow(from current: KeyHierarchy, to target: KeyHierarchy, rowVersion: UInt64) throws -> ([[UInt8]: [UInt8]], LtHash) {
        let resealer = RowResealer(from: RowCodec(keys: current), to: RowCodec(keys: target), rowVersion: rowVersion)
        var rows: [ItemRow] = []
        rows.reserveCapacity(ledger.count)
        // Read as a first open's scan reads them (no JIT, pairs merged by the client), in one
        // piece: the order does not matter, each row is written back by its id and place.
        try store.forEachRowUnordered(claiming: ScanPieces(range: nil)) { row in
            try checkRow(row, keys: current)
            rows.append(row)
        }
        guard rows.count == ledger.count else { throw tampered("rows changed during the re-key") }
        var newLedger: [[UInt8]: [UInt8]] = [:]
        newLedger.reserveCapacity(rows.count)
        var newSet = LtHash()
        // The next batch is re-sealed while the server writes this one.
        let batches = stride(from: rows.startIndex, to: rows.endIndex, by: Self.resealBatch).map { $0..<min($0 + Self.resealBatch, rows.endIndex) }
        // (A batch still being re-sealed when this throws is joined by its thread's deinit.)
        var batch = try batches.first.map { try resealer.reseal(rows[$0]) } ?? []
        try store.preferringIndexJoins {
            for k in batches.indices {
                let next = k + 1 < batches.count ? rows[batches[k + 1]] : nil
                let pending = next.flatMap(resealer.start)
                try store.replaceResealed(ArraySlice(batch.map(\.row)))
                for r in batch {
                    newLedger[r.row.itemID] = r.hash
                    newSet.add(r.hash)
                }
                if let next { batch = try pending?.join() ?? resealer.reseal(next) }
            }
        }
        guard newLedger.count == ledger.count else { throw tampered("rows changed during the re-key") }
        return (newLedger, newSet)
    }

    /// Appends a signed heartbeat (a writer's "the head is still the head at this time"),
    /// which readers with `--max-staleness` need to see often enough.
    package func heartbeat(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws {
        try write(keys: keys, adopt: adopt) { _, _ in () }
    }
}
