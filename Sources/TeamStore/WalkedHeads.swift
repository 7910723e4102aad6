/// The hash of every log entry the verified view walked past since the checkpoint it last
/// recorded (or found) on disk: what a checkpoint another process of this member records
/// below the view is compared with. That process (`kc team remove`) may have been shown
/// another branch than the view's; the checkpoint it leaves names the entry it saw at its
/// generation, and that entry must be the one this view walked there, or the view is on a
/// fork and must not go on, nor write its checkpoint over the other.
///
/// A fact from the walks themselves (issue 29, item 2): nothing is fetched again. Kept flat
/// (32 bytes an entry); emptied whenever the checkpoint on disk is the view's head.
struct WalkedHeads {
    /// The generation the hashes start after, and the hash of its entry (the keychain id
    /// for generation 0: the `previous` of entry 1).
    private(set) var base: UInt64
    private var baseHead: [UInt8]
    /// The hashes of entries `base + 1 … top`, 32 bytes each.
    private var hashes: [UInt8] = []

    static let hashBytes = 32

    /// Nothing walked past `base`, whose entry is `head`.
    init(base: UInt64, head: [UInt8]) {
        self.base = base
        baseHead = head
    }

    /// The newest generation whose hash is known.
    var top: UInt64 { base + UInt64(hashes.count / Self.hashBytes) }

    /// Starts again from `generation`, whose entry is `head` (the checkpoint on disk).
    mutating func restart(at generation: UInt64, head: [UInt8]) {
        self = WalkedHeads(base: generation, head: head)
    }

    /// Records the entry at `generation`, the one after `top` (else the walk starts again
    /// there: the hashes in between are not known).
    mutating func append(_ hash: [UInt8], at generation: UInt64) {
        guard generation == top + 1, hash.count == Self.hashBytes else {
            restart(at: generation, head: hash)
            return
        }
        hashes.append(contentsOf: hash)
    }

    /// Forgets the entries after `generation` (a catch-up that failed: the view went back).
    mutating func truncate(to generation: UInt64) {
        guard generation >= base else { return }
        let keep = Int(generation - base) * Self.hashBytes
        if keep < hashes.count { hashes.removeSubrange(keep...) }
    }

    /// The hash of the entry walked at `generation`; nil when it is not known (before `base`
    /// or after `top`).
    func hash(at generation: UInt64) -> [UInt8]? {
        if generation == base { return baseHead }
        guard generation > base, generation <= top else { return nil }
        let start = Int(generation - base - 1) * Self.hashBytes
        return Array(hashes[start..<(start + Self.hashBytes)])
    }

    /// Whether the checkpoint entry `head` at `generation` is on the chain walked (true when
    /// the walk does not reach back to it: nothing to compare).
    func agrees(at generation: UInt64, head: [UInt8]) -> Bool {
        guard let mine = hash(at: generation) else { return true }
        return mine == head
    }
}
