import KeychainCore
import POSIXSupport
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes (`docs/design.md`, "A read is one statement" and "Writes"): the
/// `HeaderAuthority` a team `Keychain` reads and writes through. A read catches the view up
/// to the head its first lookup saw; a write claims the next generation by compare-and-swap,
/// writes its rows and its signed entry in one transaction, and retries when another writer
/// won.
extension TeamAuthority {
    /// A read: first as single statements outside a transaction, each lookup reading the
    /// head with its rows (one round trip when nothing was written since the last read;
    /// one more for the entries written since). The view is brought to the head the first
    /// lookup saw before any of its rows is checked, so the rows and the view are of one
    /// snapshot. Done again inside a REPEATABLE READ snapshot when `body` ran no lookup (it
    /// reads the state only), when two lookups saw different heads, when the catch-up met
    /// a re-key, or when the connection was lost.
    package func read<T>(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void, _ body: (KeyHierarchy, StateRecord) throws -> T) throws -> T {
        if !store.connection.inTransaction {
            var seen: TeamHead?
            store.headObserver = { [unowned self] head in
                guard let head else { throw serverError("the team keychain is gone from the server") }
                if let seen {
                    guard seen == head else { throw NeedsSnapshot() }
                    return
                }
                _ = try catchUp(keys, to: head, mayRescan: false)
                try checkFreshness()
                seen = head
            }
            defer { store.headObserver = nil }
            do {
                let result = try body(keys, state(generation: generation, count: ledger.count))
                if seen != nil { return result }
            } catch is NeedsSnapshot {
            } catch let e as KeychainError where e.status == errSecNotAvailable && store.connection.isBroken && !store.connection.timedOut {
            }
        }
        // A run `PostgresItemStore.transaction` repeats (a pool lost a prepared statement)
        // starts from the keys the run before it opened at a re-key, not those the read
        // began with (the view is already past the re-key: its catch-up finds nothing).
        var latest = keys
        return try store.transaction(write: false) {
            let current = try catchUp(latest)
            try checkFreshness()
            if current !== latest { adopt(current); latest = current }
            return try body(current, state(generation: generation, count: ledger.count))
        }
    }

    package func write<T>(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void, _ body: (KeyHierarchy, inout StateRecord) throws -> T) throws -> T {
        var attempt = 0
        let giveUp = Deadline.after(seconds: Self.busyTimeout)
        // Each attempt (after a lost race, or the transaction run again after a pool lost a
        // prepared statement) starts from the keys the attempt before it opened at a re-key:
        // with the keys the write began with, the next catch-up, finding nothing new, would
        // hand them back and the write would seal under the master key a removed member holds.
        var latest = keys
        while true {
            attempt += 1
            var entry: LogEntry?
            var produced: T?
            do {
                let result: T = try store.transaction(write: true) {
                    let (result, e) = try writeOnce(&latest, adopt: adopt, body)
                    entry = e
                    produced = result
                    return result
                }
                if let e = entry { try advance(to: e) }
                saveCheckpoint()
                return result
            } catch is LostRace {
                // As a file keychain waits for its lock: lost races are retried for 30 s, not a
                // number of times (a writer that keeps losing to a busy one is not an error).
                guard Deadline.now < giveUp else {
                    throw KeychainError(
                        errSecNotAvailable, "\(label): other writers kept winning for \(Int(Self.busyTimeout)) s; nothing was written", hint: "try again")
                }
                usleep(UInt32.random(in: 200...(2_000 * UInt32(min(attempt, 20)))))
            } catch is NeedsSnapshot {
                latest = try catchUpInSnapshot(latest, adopt: adopt)
            } catch let error as KeychainError where error.status == errSecNotAvailable && entry != nil {
                // The commit's answer was lost with the connection: whether it is in depends
                // on the server. Reconnect and look for the entry this write signed.
                guard let e = entry, let produced, try committedAfterReconnect(e, keys: &latest, adopt: adopt) else { throw error }
                saveCheckpoint()
                return produced
            }
        }
    }

    /// One attempt of `write`, inside its transaction: the view caught up (adopting the keys
    /// of a re-key), the next generation claimed, `body` run, and the entry for its row
    /// changes signed and appended.
    /// - Returns: what `body` answered, and the entry appended.
    /// - Throws: `LostRace` when another writer claimed the generation first.
    private func writeOnce<T>(
        _ latest: inout KeyHierarchy, adopt: (KeyHierarchy) -> Void,
        _ body: (KeyHierarchy, inout StateRecord) throws -> T
    ) throws -> (T, LogEntry) {
        let current = try catchUp(latest, mayRescan: false)
        if current !== latest { adopt(current); latest = current }
        guard let me, me.role.mayWrite else {
            throw KeychainError(
                errSecReadOnly, "\(label) is read-only for \(self.me?.name ?? "this device"), a reader",
                hint: "an admin can make it a writer: kc team remove, then kc team add with --role writer")
        }
        // Never commit an entry every other member refuses (`checkWriter`): one
        // signed after the expiry would leave the keychain unreadable to all.
        guard me.isValid(at: nextEntryTime), me.isValid(at: lastTime) else { throw expired(me) }
        guard try tables.claim(expectedGeneration: generation) else { throw LostRace() }
        pending = []
        pendingSet = set
        pendingLedger = [:]
        pendingCount = ledger.count
        defer { pending = []; pendingLedger = [:] }
        var s = state(generation: generation + 1, count: ledger.count)
        let result = try body(current, &s)
        guard Int(s.itemCount) == pendingCount else {
            throw KeychainError(errSecInternalError, "\(label): the write's count does not match its row changes")
        }
        // An entry that changes no row is a heartbeat (`kc team heartbeat`).
        var e = LogEntry(
            kind: pending.isEmpty ? .heartbeat : .items, generation: generation + 1, previous: head, keyGeneration: keyGeneration,
            signer: member.memberID, time: nextEntryTime, changes: pending, setDigest: pendingSet.digest,
            count: UInt64(pendingCount), rosterDigest: roster.digest)
        e.sign(keychainID: keychainID, with: member)
        try tables.append(generation: e.generation, kind: Int16(e.kind.rawValue), entry: e.encoded, newHead: e.hash, keyGeneration: nil)
        return (result, e)
    }

    /// Moves the view past this process's own committed entry, applying its changes as
    /// those of any other writer's entry are applied.
    private func advance(to e: LogEntry) throws {
        try apply(e.changes, at: e.generation)
        generation = e.generation
        head = e.hash
        lastTime = e.time
        walked.append(e.hash, at: e.generation)
    }

    /// Whether the entry `e` is on the server after reconnecting: the view catches up (every
    /// entry checked, as for any read) and `e` must be the entry its walk finds at `e`'s
    /// generation. Not a statement of its own for that one entry: a fact comes from the one
    /// verified walk (issue 29, item 2).
    private func committedAfterReconnect(_ e: LogEntry, keys: inout KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws -> Bool {
        for _ in 0..<50 {
            do {
                try store.connection.reconnect()
                let current = try store.transaction(write: false) { try catchUp(keys, mark: e.generation) }
                if current !== keys { adopt(current); keys = current }
                return markedHash == e.hash
            } catch let error as KeychainError where error.status == errSecNotAvailable && !store.connection.timedOut {
                // (A server that let a round trip pass its deadline is stalled: the error
                // goes up, the write's outcome unknown until the next read shows it.)
                usleep(100_000)
            }
        }
        return false
    }

    package func admit(_ attributes: [String: AttributeValue]) throws {
        if case .string(let pdmn)? = attributes["pdmn"], pdmn.hasSuffix("u") {
            throw KeychainError(
                errSecParam, "a this-device-only item cannot go into \(label): a team keychain is shared by every member's devices",
                hint: "choose another accessibility (--accessible after-first-unlock or when-unlocked), or keep it in a file keychain")
        }
        if let flags = attributes[kcAttrAccessControlFlags], flags != .int(0) {
            throw KeychainError(
                errSecParam, "an item that requires user presence cannot go into \(label): a team keychain has no password of its own to ask for",
                hint: "keep it in a file keychain")
        }
    }

    package func unsupported(_ operation: String) -> KeychainError? {
        KeychainError(
            errSecUnimplemented, "\(operation) is not supported for the team keychain \(label)",
            hint: "team keychains are managed with `kc team` (docs/team.md)")
    }
}
