/// The rows an open keychain has verified, for checking every row a lookup returns
/// (`docs/format.md` §6, "Every row a lookup reads"). The integrity scan fills it; the
/// keychain's own writes change it once they commit.
///
/// Noticing that the file changed (SQLite's data_version, the files' change times) is not
/// enough on its own: bytes can reach the file, or the pages SQLite reads, without moving
/// either (a write through a shared mapping of a page already dirty, an edit of the -shm's
/// index of the log). A row that is not in the ledger was not in the file when it was
/// verified, and is refused whatever the markers say.
struct RowLedger {
    /// The digests of the rows found by the last integrity scan, with this process's
    /// committed writes applied; nil before the first scan.
    private var verified: Set<RowDigest>?
    /// The current write transaction's changes, applied when it commits.
    private var added: Set<RowDigest> = []
    private var removed: Set<RowDigest> = []

    /// Starts again from the rows of a complete integrity scan.
    mutating func reset(to digests: Set<RowDigest>) {
        verified = digests
        added = []
        removed = []
    }

    /// Forgets everything: the next read verifies every row first.
    mutating func invalidate() {
        verified = nil
        added = []
        removed = []
    }

    /// Whether the ledger holds a verified state.
    var isValid: Bool { verified != nil }

    /// Whether a row with this digest is one the ledger vouches for (the current write
    /// transaction's own rows included).
    func contains(_ digest: RowDigest) -> Bool {
        if added.contains(digest) { return true }
        guard let verified else { return false }
        return verified.contains(digest) && !removed.contains(digest)
    }

    /// Records, within the current write transaction, a row replaced, removed or added.
    mutating func record(removing old: RowDigest?, adding new: RowDigest?) {
        if let old {
            if added.remove(old) == nil { removed.insert(old) }
        }
        if let new { added.insert(new) }
    }

    /// The write transaction committed: its changes become verified state.
    mutating func commit() {
        verified?.subtract(removed)
        verified?.formUnion(added)
        added = []
        removed = []
    }

    /// The write transaction rolled back: its changes never happened.
    mutating func rollback() {
        added = []
        removed = []
    }
}
