/// What vouches for a keychain's rows when the header MAC and accumulator cannot
/// (`docs/design.md`, "Team keychains"): every member of a team keychain holds the master
/// key, so any of them could forge a header under `K_header` or find accumulator edits that
/// cancel out. A team keychain's `Keychain` holds one of these instead, and its reads,
/// writes and integrity checks go through it; a file keychain has none and keeps the MAC.
///
/// The authority keeps, in memory, the verified view of the store: its generation, the
/// rows it vouches for and the set hash. `Keychain` calls it inside its own operations:
/// `read` around the whole read, `write` around the whole write, `account` for each row
/// a write changes, `checkRow` for each row a lookup reads.
package protocol HeaderAuthority: AnyObject {
    /// Performs one read: brings the verified view up to what the store holds (checking
    /// whatever changed since) and runs `body` with the keys and state to read under, the
    /// rows it reads being of the same snapshot as the view. `adopt` is called with new keys
    /// when the keychain was re-keyed meanwhile. `body` may be run a second time (after a
    /// first attempt outside a transaction found it needs one), so it must start from
    /// nothing, and one that reads rows must not also depend on the state's generation or
    /// count (they are the view's before its first lookup).
    /// - Throws: errSecInvalidKeychain when the store went back, forked or was tampered with.
    func read<T>(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void, _ body: (KeyHierarchy, StateRecord) throws -> T) throws -> T
    /// Performs one write: opens the write transaction, claims the next generation, runs
    /// `body` with the state to write under (its generation is the new one), records what
    /// `account` was told, commits, and retries `body` when another writer won the race.
    /// `adopt` is called with new keys when the keychain was re-keyed meanwhile.
    func write<T>(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void, _ body: (KeyHierarchy, inout StateRecord) throws -> T) throws -> T
    /// Records one row change of the write in progress: `old` leaves, `new` arrives.
    func account(removing old: ItemRow?, adding new: ItemRow?, keys: KeyHierarchy) throws
    /// Refuses a row the verified view does not hold (edited, replayed or put back).
    func checkRow(_ row: ItemRow, keys: KeyHierarchy) throws
    /// Verifies every row against the signed head, as a first open does; answers the keys
    /// of the head's key generation.
    func verifyAll(keys: KeyHierarchy) throws -> KeyHierarchy
    /// Refuses, before anything is sealed, an item this kind of keychain cannot keep
    /// (a team keychain keeps no this-device-only or user-presence item).
    func admit(_ attributes: [String: AttributeValue]) throws
    /// What `kc` shows for an operation the authority does not support (a password change,
    /// a file backup): nil when it does.
    func unsupported(_ operation: String) -> KeychainError?
    /// The keychain was locked: keep what must outlive the keys (a checkpoint).
    func didLock()
    /// The agent holding the keychain unlocked is idle (called about once a second between
    /// requests): record what a read or write left unrecorded (a checkpoint written at most
    /// once a second), without waiting for anything.
    func idle()
}
