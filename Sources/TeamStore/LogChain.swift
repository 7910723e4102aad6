import KeychainCore
import TeamCore

/// The log's hash chain (`docs/team.md`, "The log"), walked one entry at a time: the one
/// place where an entry's link to the entry before it is checked, where the heads this device
/// saw are compared with the entries the walk passes, and where the walk's end is compared
/// with the head the server names. A first open walks it from the genesis
/// (`TeamAuthority.fullVerification`), a catch-up from the view's head
/// (`TeamAuthority.catchUp`); everything after the link (signatures, times, row changes)
/// takes a `ChainedEntry`, which only `link` makes.
///
/// A fact from the walk itself (issue 29, item 2): the entry at a generation this device saw
/// is compared as the walk passes it, never fetched again by a statement of its own that the
/// server could answer from another branch.
struct LogChain {
    /// Where a walk starts; the messages name it as they always did.
    enum Origin {
        /// From the genesis (a first open, `kc team verify`).
        case genesis
        /// From the verified view's head (a catch-up).
        case view
    }

    let origin: Origin
    /// The keychain's name in messages, `team:NAME`.
    let label: String
    /// The generation and hash of the last entry linked: the start's before the first (0
    /// and the keychain id for the genesis).
    private(set) var generation: UInt64
    private(set) var head: [UInt8]
    /// The heads this device saw beyond the start (`TeamAuthority.headsToPass`): each must be
    /// the entry the walk passes at its generation.
    let seen: [UInt64: [UInt8]]
    /// The hashes walked past, for a checkpoint another process records later
    /// (`WalkedHeads`): every entry after `walked.base`.
    private(set) var walked: WalkedHeads

    /// A walk from `generation`, whose entry is `head`, checking the heads in `seen` and
    /// recording what it passes in `walked`.
    init(from origin: Origin, label: String, generation: UInt64, head: [UInt8], seen: [UInt64: [UInt8]], walked: WalkedHeads) {
        self.origin = origin
        self.label = label
        self.generation = generation
        self.head = head
        self.seen = seen
        self.walked = walked
    }

    /// Links the stored entry `bytes` at generation `g` to the chain: it must be the next
    /// generation, say so itself, and name the hash of the entry before it; at a generation
    /// this device saw it must be the entry it saw. The hash is of the stored bytes
    /// (`LogEntry.hash(encoded:)`), not of the entry encoded again: one encoding fewer per
    /// entry, and bytes that are not an entry's encoding break the chain.
    /// - Throws: errSecInvalidKeychain for a broken link or a fork; errSecDecode for a
    ///   malformed entry.
    mutating func link(_ bytes: [UInt8], at g: UInt64) throws -> ChainedEntry {
        let e = try LogEntry(encoded: bytes, at: g)
        guard g == generation + 1, e.generation == g, e.previous == head else {
            switch origin {
            case .genesis: throw error("entry \(g) of the log does not link to the entry before it: entries were hidden, replaced or reordered")
            case .view: throw error("entry \(g) does not link to the entry before it: entries were replaced, replayed or reordered")
            }
        }
        let hash = LogEntry.hash(encoded: bytes)
        if let saw = seen[g], saw != hash {
            throw error("the entry at generation \(g) is not the one this device saw (a fork)")
        }
        if g > walked.base { walked.append(hash, at: g) }
        generation = g
        head = hash
        return ChainedEntry(entry: e, hash: hash)
    }

    /// Checks that the walk ended at the head the server names (its generation and hash).
    func ends(at serverHead: TeamHead) throws {
        guard generation == serverHead.generation, head == serverHead.head else {
            switch origin {
            case .genesis: throw error("the head does not name the last entry of the log (generation \(serverHead.generation)): entries were hidden")
            case .view: throw error("the head does not name the last entry of the log")
            }
        }
    }

    private func error(_ what: String) -> KeychainError {
        TeamAuthority.serverError(label, what)
    }
}

/// A log entry linked to the chain by `LogChain.link` (the only maker): its place and hash
/// are verified; its signature, time and row changes are checked next by the walk that
/// took it.
struct ChainedEntry {
    /// The entry, decoded from its stored bytes.
    let entry: LogEntry
    /// The hash of its stored bytes: what the next entry's `previous` names.
    let hash: [UInt8]

    fileprivate init(entry: LogEntry, hash: [UInt8]) {
        self.entry = entry
        self.hash = hash
    }

    var generation: UInt64 { entry.generation }
}
