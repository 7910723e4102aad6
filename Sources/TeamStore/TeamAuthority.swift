import KeychainCore
import KeychainFormats
import POSIXSupport
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// What vouches for a team keychain's rows (`HeaderAuthority`): the writer-signed,
/// hash-chained log on the server, checked here against the roster and the member's own
/// checkpoint (`docs/team.md`, "What the server can and cannot do").
///
/// It keeps the verified view in memory: the head (generation and entry hash), the roster
/// and key generation, and for every row its hash (the ledger) and their sum (the set
/// hash). A read first brings the view up to the server's head, checking each new entry's
/// link, signature and role and applying its row changes; a fetched row must then have
/// exactly the hash the view holds for it. A write claims the next generation by
/// compare-and-swap, writes rows and the signed entry in the same transaction, and retries
/// when another writer won.
///
/// One file per section of `docs/design.md`: the first open (`+FirstOpen`, with the scan of
/// every row in `+RowScan`), catching up (`+CatchUp`), reads and writes (`+ReadWrite`), the
/// checkpoint (`+Checkpoint`), membership changes (`+Roster`). A fact is verified once
/// (`docs/team.md`, "What the server can and cannot do"), in one place each, and the walks
/// take the verified value:
/// - the log's hash chain, the heads this device saw along it and the head the server
///   names: `LogChain`, which alone makes a `ChainedEntry`;
/// - a roster entry's admin signature and roster chain: `verifyRosterEntry`, which alone
///   makes a `SignedRoster`; a write's signer: `checkWriter` (`+Signatures`);
/// - entry times: `checkTime` (`+EntryTime`);
/// - the set hash and each row's hash: `accept` (of a `ScannedRows`, which only a scan
///   makes), `apply` and `holdsRows(of:)`, `checkRow` (`+Ledger`);
/// - the checkpoint floor: `headsToPass` (`+Checkpoint`).
package final class TeamAuthority: HeaderAuthority {
    /// The keychain's name in messages, `team:NAME`.
    let label: String
    let keychainID: [UInt8]
    let store: PostgresItemStore
    let tables: TeamTables
    /// This member's keys (its seed, from the team file or the runner token).
    let member: MemberKeys
    let checkpointPath: String
    let checkpointKey: SymmetricKey

    /// The verified view.
    var generation: UInt64 = 0
    var head: [UInt8] = []
    var keyGeneration: UInt32 = 0
    package internal(set) var roster: Roster
    /// When each member was added and by whom, and who was removed, as the verified roster
    /// entries say.
    package internal(set) var history = RosterHistory()
    var rosterEntryHash: [UInt8] = []
    var commitment: [UInt8] = []
    var set = LtHash()
    var ledger: [[UInt8]: [UInt8]] = [:]
    var lastTime: UInt64 = 0
    /// The longest time (seconds) the newest signed entry may be old before reads fail as a
    /// freeze (`KC_TEAM_MAX_STALENESS`); 0: no limit.
    package var maxStaleness: UInt64 = 0
    /// Inside a catch-up: each ledger row `apply` changed and what it held before, in order.
    var ledgerJournal: [(itemID: [UInt8], hash: [UInt8]?)] = []
    /// Whether `apply` journals (inside a catch-up).
    var journalling = false
    /// The hash of the entry at the generation a catch-up was asked to mark, as it walked it.
    var markedHash: [UInt8]?
    /// This device's checkpoint as last read, and which file it was read from
    /// (`checkpointOnDisk`).
    var knownCheckpoint: (checkpoint: Checkpoint?, file: CheckpointFileIdentity?)?
    /// How many log entries a full verification reads at a time.
    var logPageSize = 4_096
    /// How many connections the last full verification scanned the rows on: 2 when the
    /// second one shared the snapshot, 1 when it could not (tests check both paths).
    package internal(set) var lastScanConnections = 0
    /// When the checkpoint was last recorded (`saveCheckpoint`), and the head it then held
    /// (the view's, or a higher one another process recorded).
    var lastCheckpoint = Deadline.now
    var recordedHead: (generation: UInt64, head: [UInt8])?
    /// The entries the view walked past since the checkpoint on disk was last its head: a
    /// checkpoint another process of this member records below the view is compared with
    /// them (`WalkedHeads`).
    var walked: WalkedHeads

    /// The write in progress: its changes, and the set and ledger as they will be.
    var pending: [RowChange] = []
    var pendingSet = LtHash()
    var pendingLedger: [[UInt8]: [UInt8]] = [:]
    var pendingCount: Int = 0

    /// Thrown inside a write transaction when another writer claimed the generation first.
    struct LostRace: Error {}

    /// Thrown by a read outside a snapshot that needs one: its lookups saw two heads, or
    /// its catch-up met a re-key (whose scan of every row must see the rows as of the head).
    /// The read is done again inside a REPEATABLE READ snapshot.
    struct NeedsSnapshot: Error {}

    init(
        label: String, keychainID: [UInt8], store: PostgresItemStore, tables: TeamTables, member: MemberKeys,
        checkpointPath: String, checkpointKey: SymmetricKey
    ) throws {
        self.label = label
        self.keychainID = keychainID
        self.store = store
        self.tables = tables
        self.member = member
        self.checkpointPath = checkpointPath
        self.checkpointKey = checkpointKey
        walked = WalkedHeads(base: 0, head: keychainID)
        roster = try Roster([])
    }

    /// This member's record in the current roster.
    package var me: MemberRecord? { roster.member(member.memberID) }

    /// `generation:hash` of the verified head, to compare across machines (`kc team head`).
    package var headText: String { "\(generation):\(Hex.encode(head))" }

    /// The number of items in the verified view.
    package var itemCount: Int { ledger.count }

    // MARK: - Errors that name what the server did

    func serverError(_ what: String) -> KeychainError {
        Self.serverError(label, what)
    }

    func tampered(_ what: String) -> KeychainError {
        Self.tampered(label, what)
    }

    /// The error for this member's expired membership (a runner past `--expires`): its
    /// token opens nothing, and an entry it signed now every other member would refuse.
    func expired(_ me: MemberRecord) -> KeychainError {
        KeychainError(
            errSecAuthFailed,
            "\(me.isRunner ? "the runner token" : "the membership") of \(me.name) in \(label) expired at \(ISO8601.string(secondsSince1970: me.expires))",
            hint: "an admin issues a new one with `kc team add-runner`")
    }

    /// The error for this device, removed from the roster by `removal`, a roster entry whose
    /// admin signature was checked: its own status (errSecRestrictedAPI, exit 28), said only
    /// then. Any other refusal of a device (not in a roster the log shows, no master key for
    /// it) stays errSecAuthFailed: what the server alone can do never reads as a removal.
    /// It says as of which generation: with no checkpoint, a server may serve an old genuine
    /// prefix of the log that ends after a removal an admin has since undone, so the hint
    /// asks to confirm with an admin before joining anew.
    func removed(_ removal: RosterHistory.Change, asOf headGeneration: UInt64) -> KeychainError {
        KeychainError(
            errSecRestrictedAPI,
            "this device is no longer a member of \(label): \(removal.by) removed it at \(ISO8601.string(secondsSince1970: removal.time)); it reads nothing written since (as of generation \(headGeneration), the log the server served)",
            hint:
                "confirm with an admin (`kc team members` on their device) before joining anew; then ask them to add it again: a device joins anew (its old team file removed), a CI runner gets a new token (`kc team add-runner`)"
        )
    }

    /// `serverError(_:)` for the keychain named `label` (a walk of the log, `LogChain`).
    static func serverError(_ label: String, _ what: String) -> KeychainError {
        KeychainError(
            errSecInvalidKeychain, "\(label): \(what)",
            hint: "the server (or whoever can write to its database) changed the team keychain; compare `kc team head` with other members and see docs/team.md")
    }

    /// `tampered(_:)` for the keychain named `label` (a scan on another thread).
    static func tampered(_ label: String, _ what: String) -> KeychainError {
        KeychainError(errSecDecode, "\(label): \(what)", hint: "run `kc team verify`; see docs/team.md, \"What the server can and cannot do\"")
    }

    /// How long a write retries lost races before it gives up (a file keychain's busy timeout).
    static let busyTimeout = 30.0

    package static var now: UInt64 { UInt64(max(0, time(nil))) }

    /// The state `Keychain` reads and writes under: the generation and count of the view.
    func state(generation g: UInt64, count: Int) -> StateRecord {
        StateRecord(
            minWriterVersion: TeamFormat.version, generation: g, itemCount: UInt64(count), accumulator: [],
            idleTimeout: 15 * 60, maxTimeout: 12 * 60 * 60, mac: [])
    }
}
