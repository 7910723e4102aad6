import KeychainCore
import TeamCore

/// The ledger (every row's hash, by item id) and the set hash (their sum, an LtHash): the one
/// place where rows are compared with the signed log. A scan becomes the view only through
/// `accept`, against a signed entry's set hash and count; an entry's row changes only
/// through `apply`, against the rows as the log left them, and the view then against the
/// entry (`holdsRows(of:)`); a row a lookup fetched only through `checkRow`, against its
/// hash in the ledger; a write's own changes are counted by `account`.
extension TeamAuthority {
    /// Takes `rows` as the view's ledger and set hash when their count and set hash are a
    /// signed entry's (at generation `g`).
    func accept(_ rows: ScannedRows, expectedDigest: [UInt8], expectedCount: UInt64, at g: UInt64) throws {
        guard UInt64(rows.ledger.count) == expectedCount, rows.set.digest == expectedDigest else {
            let what =
                UInt64(rows.ledger.count) == expectedCount
                ? "rows were edited, replayed or swapped"
                : "the server holds \(rows.ledger.count) rows where the signed log counts \(expectedCount): rows were deleted or put back"
            throw tampered("the items do not match the signed log at generation \(g) (\(what))")
        }
        ledger = rows.ledger
        set = rows.set
    }

    /// Whether the view's set hash and count are those the signed entry `e` names.
    func holdsRows(of e: LogEntry) -> Bool {
        set.digest == e.setDigest && UInt64(ledger.count) == e.count
    }

    /// Applies an items entry's row changes to the ledger and set hash (journalling what
    /// each row held before, inside a catch-up).
    func apply(_ changes: [RowChange], at g: UInt64) throws {
        for c in changes {
            if journalling { ledgerJournal.append((c.itemID, ledger[c.itemID])) }
            if !c.oldHash.isEmpty {
                guard ledger[c.itemID] == c.oldHash else {
                    throw tampered("entry \(g) changes a row that is not as the log left it: the log or the rows were edited")
                }
                ledger[c.itemID] = nil
                set.remove(c.oldHash)
            }
            if !c.newHash.isEmpty {
                guard ledger[c.itemID] == nil else { throw tampered("entry \(g) adds a row that exists") }
                ledger[c.itemID] = c.newHash
                set.add(c.newHash)
            }
        }
    }

    package func checkRow(_ row: ItemRow, keys: KeyHierarchy) throws {
        let h = RowHash.of(row)
        if let p = pendingLedger[row.itemID] {
            guard !p.isEmpty, p == h else { throw tampered("a row changed under this write") }
            return
        }
        guard let known = ledger[row.itemID], Sodium.constantTimeEqual(known, h) else {
            throw tampered("an item on the server is not the one the signed log names (edited, replayed or put back)")
        }
    }

    package func account(removing old: ItemRow?, adding new: ItemRow?, keys: KeyHierarchy) throws {
        guard let id = (old ?? new)?.itemID, let cls = (old ?? new)?.classCode else { return }
        let oldHash = old.map(RowHash.of) ?? []
        let newHash = new.map(RowHash.of) ?? []
        if !oldHash.isEmpty { pendingSet.remove(oldHash); pendingCount -= 1 }
        if !newHash.isEmpty { pendingSet.add(newHash); pendingCount += 1 }
        pending.append(
            RowChange(
                itemID: id, classCode: cls, oldVersion: old?.rowVersion ?? 0, newVersion: new?.rowVersion ?? 0,
                oldHash: oldHash, newHash: newHash))
        pendingLedger[id] = newHash
    }
}
