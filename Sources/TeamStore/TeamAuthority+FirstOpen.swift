import KeychainCore
import TeamCore

/// The first open (`docs/design.md`, "The roster lives in the log"): the whole log walked
/// from the genesis to the head, and every row checked against the head's set hash. Also
/// what `kc team verify` runs (`verifyAll`). Every fact is taken from this one walk and never
/// fetched again (issue 29, item 2): the heads this device saw are compared as the walk
/// passes them (`LogChain`).
extension TeamAuthority {
    /// Checks the keychain from its genesis as a first open does: the genesis is the one the
    /// id names, the log is one hash chain from it to the head, every roster entry on that
    /// chain is signed by an admin of the roster before it, the head
    /// entry is signed by a member allowed to write it, this member's master-key wrap is
    /// signed by an admin and matches the committed key, every row hashes into the head's set
    /// hash, and nothing went back since this member's checkpoint.
    /// - Returns: the keys of the head's key generation.
    func openAndVerify() throws -> KeyHierarchy {
        try store.transaction(write: false) { try fullVerification() }
    }

    package func verifyAll(keys: KeyHierarchy) throws -> KeyHierarchy {
        let current = try store.transaction(write: false) { try fullVerification() }
        saveCheckpoint(force: true)
        return current
    }

    /// What a walk from the genesis found: the chain it linked, the roster chain along it
    /// (the roster, key generation and commitment of its last entry), and the head entry
    /// with the time of the entry before it.
    struct GenesisWalk {
        var chain: LogChain
        var roster: Roster
        /// The hash of the last roster entry (the keychain id before the first).
        var rosterEntryHash: [UInt8]
        var keyGeneration: UInt32 = 0
        /// Who was added and removed when, along the roster chain.
        var history: RosterHistory
        var lastRoster: LogEntry?
        var last: LogEntry?
        var beforeHeadTime: UInt64 = 0
    }

    /// Walks and checks the whole log and every row (see `openAndVerify`), in named steps.
    private func fullVerification() throws -> KeyHierarchy {
        let snapshot = try exportSnapshot()
        guard let genesisBytes = try tables.genesis(), let serverHead = try tables.head() else {
            throw KeychainError(
                errSecNoSuchKeychain, "\(label) is not on the server (no keychain with its id)",
                hint: "check the DSN, or whether the database was replaced")
        }
        let seen = try headsToPass(to: serverHead, from: .genesis)
        let now = Self.now
        // The rows are scanned in pieces that two connections claim in turn: a second one,
        // in this transaction's snapshot, from now on, and this one once it has walked the
        // log (both are checked against the head read here, as one set).
        let scan = try startScan(snapshot: snapshot)
        let genesis = try Genesis(encoded: genesisBytes, expecting: keychainID)
        guard serverHead.schemaVersion <= TeamFormat.version, serverHead.minWriterVersion <= TeamFormat.version else {
            throw KeychainError(errSecWrongSecVersion, "\(label) was written by a newer kc (format \(serverHead.schemaVersion))", hint: "upgrade kc")
        }
        let walk = try walkFromGenesis(genesis, to: serverHead, seen: seen, now: now)
        let (headEntry, lastRoster) = try checkHead(of: walk, at: serverHead)
        // The view takes the walked roster only if the rest holds: `kc team verify` on an
        // open keychain whose server serves a genuine longer log with rows that do not add up
        // must leave the view as it was, not half moved (a newer roster over the old head).
        let before = (roster, keyGeneration, commitment, rosterEntryHash, history)
        roster = walk.roster
        history = walk.history
        keyGeneration = walk.keyGeneration
        commitment = lastRoster.masterKeyCommitment
        rosterEntryHash = walk.rosterEntryHash
        let keys: KeyHierarchy
        do {
            guard let me else {
                // Said only when a roster entry on the verified chain took this device out.
                if let removal = walk.history.removed[member.memberID] { throw removed(removal, asOf: serverHead.generation) }
                throw KeychainError(
                    errSecAuthFailed, "this device (\(member.fingerprint)) is not a member of \(label)",
                    hint: "an admin adds it with `kc team add NAME --key \(member.fingerprint)`; if it was removed, ask to be added again")
            }
            guard me.isValid(at: Self.now) else { throw expired(me) }
            keys = try openMasterKey(generation: walk.keyGeneration, signedBy: lastRoster)
            // Every row, against the head's set hash and count.
            try accept(try finishScan(scan), expectedDigest: headEntry.setDigest, expectedCount: headEntry.count, at: serverHead.generation)
        } catch {
            (roster, keyGeneration, commitment, rosterEntryHash, history) = before
            throw error
        }
        generation = serverHead.generation
        head = serverHead.head
        lastTime = headEntry.time
        walked = walk.chain.walked
        return keys
    }

    /// The whole log from the genesis to the server's head, a page of entries at a time, as
    /// one hash chain (`LogChain`), and along it the chain of rosters from the genesis's
    /// root admin. An entry's kind is what its signed bytes say, never the `kind` column: a
    /// roster entry (a removal) relabelled, or deleted, would otherwise drop out of the
    /// roster chain while the entries after it still led to the head (and a removed member
    /// could sign the head under the roster before its removal).
    private func walkFromGenesis(_ genesis: Genesis, to serverHead: TeamHead, seen: [UInt64: [UInt8]], now: UInt64) throws -> GenesisWalk {
        // The hashes walked past the lowest head this device saw (every generation, for a
        // device with none): what a checkpoint another process records later is compared with.
        let walkBase = seen.keys.min() ?? 0
        let chain = LogChain(
            from: .genesis, label: label, generation: 0, head: keychainID, seen: seen,
            walked: WalkedHeads(base: walkBase, head: seen[walkBase] ?? keychainID))
        var walk = GenesisWalk(
            chain: chain, roster: try Roster([genesis.root]), rosterEntryHash: keychainID,
            history: RosterHistory(root: genesis.root, at: genesis.created))
        var after: UInt64 = 0
        paging: while after < serverHead.generation {
            let page = try tables.entries(after: after, limit: logPageSize)
            guard let lastOfPage = page.last?.generation else { break }
            for (g, bytes) in page {
                guard g <= serverHead.generation else { break paging }
                try take(try walk.chain.link(bytes, at: g), into: &walk, now: now)
            }
            after = lastOfPage
        }
        return walk
    }

    /// Takes one linked entry into the walk from the genesis: its time, and for a roster
    /// entry its signature and place in the roster chain (not the signatures of the item
    /// entries: only the head's is checked, by `checkHead`).
    private func take(_ linked: ChainedEntry, into walk: inout GenesisWalk, now: UInt64) throws {
        let e = linked.entry
        try checkTime(e, after: walk.last?.time ?? 0, now: now)
        walk.beforeHeadTime = walk.last?.time ?? 0
        walk.last = e
        guard e.kind == .roster else { return }
        let signed = try verifyRosterEntry(linked, under: walk.roster, following: walk.rosterEntryHash, from: .genesis)
        let keyGen = walk.keyGeneration
        guard e.keyGeneration == keyGen || e.keyGeneration == keyGen + 1, keyGen > 0 || e.keyGeneration == 1 else {
            throw serverError("the roster entry at generation \(linked.generation) is inconsistent")
        }
        walk.history.take(e, from: walk.roster, to: signed.roster)
        walk.roster = signed.roster
        walk.keyGeneration = e.keyGeneration
        walk.rosterEntryHash = linked.hash
        walk.lastRoster = e
    }

    /// Checks the end of the walk: the log has a roster, its last entry is the head the
    /// server names, and the head is signed by someone allowed to write it under the last
    /// roster (or is the last roster entry).
    /// - Returns: the head entry and the last roster entry.
    private func checkHead(of walk: GenesisWalk, at serverHead: TeamHead) throws -> (head: LogEntry, lastRoster: LogEntry) {
        guard let lastRoster = walk.lastRoster else {
            throw serverError("the log has no roster: entries were hidden")
        }
        try walk.chain.ends(at: serverHead)
        guard let headEntry = walk.last else {
            throw serverError("the head does not name the last entry of the log (generation \(serverHead.generation)): entries were hidden")
        }
        if headEntry.kind == .roster {
            guard headEntry == lastRoster else { throw serverError("the head is a roster entry the roster chain does not end with") }
        } else {
            try checkWriter(headEntry, roster: walk.roster, keyGeneration: walk.keyGeneration, after: walk.beforeHeadTime)
        }
        return (headEntry, lastRoster)
    }

    /// Opens this member's master-key wrap of `generation`, checking the admin's signature
    /// over it and the commitment of the roster entry that made it.
    func openMasterKey(generation keyGen: UInt32, signedBy entry: LogEntry) throws -> KeyHierarchy {
        guard let wrap = try tables.wrap(keyGeneration: keyGen, memberID: member.memberID) else {
            throw KeychainError(
                errSecAuthFailed, "\(label) holds no master key for this device at key generation \(keyGen)",
                hint: "an admin adds it again with `kc team add`")
        }
        var admins = roster.adminSignKeys(at: entry.time)
        if let signer = roster.member(entry.signer) ?? nil, signer.role == .admin { admins.append(signer.signPublicKey) }
        let mk = try MasterKeyDelivery.open(
            sealed: wrap.sealed, signature: wrap.signature, keychainID: keychainID, keyGeneration: keyGen,
            member: member, adminSignKeys: admins, commitment: entry.masterKeyCommitment)
        return try KeyHierarchy(master: SymmetricKey(mk), keychainID: keychainID, keyGeneration: keyGen, blindKeyIDs: Schema.blindKeyIDs)
    }
}
