import KeychainCore
import POSIXSupport
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// What vouches for a team keychain's rows (`HeaderAuthority`): the writer-signed,
/// hash-chained log on the server, checked here against the roster and the member's own
/// checkpoint (`docs/team.md`, "The log").
///
/// It keeps the verified view in memory: the head (generation and entry hash), the roster
/// and key generation, and for every row its hash (the ledger) and their sum (the set
/// hash). A read first brings the view up to the server's head, checking each new entry's
/// link, signature and role and applying its row changes; a fetched row must then have
/// exactly the hash the view holds for it. A write claims the next generation by
/// compare-and-swap, writes rows and the signed entry in the same transaction, and retries
/// when another writer won.
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
    var rosterEntryHash: [UInt8] = []
    var commitment: [UInt8] = []
    var set = LtHash()
    var ledger: [[UInt8]: [UInt8]] = [:]
    var lastTime: UInt64 = 0
    /// The longest time (seconds) the newest signed entry may be old before reads fail as a
    /// freeze (`KC_TEAM_MAX_STALENESS`); 0: no limit.
    package var maxStaleness: UInt64 = 0
    /// Inside a catch-up: each ledger row `apply` changed and what it held before, in order.
    private var ledgerJournal: [(itemID: [UInt8], hash: [UInt8]?)] = []
    /// Whether `apply` journals (inside a catch-up).
    private var journalling = false
    /// The hash of the entry at the generation a catch-up was asked to mark, as it walked it.
    private var markedHash: [UInt8]?
    /// This device's checkpoint as last read, and which file it was read from
    /// (`checkpointOnDisk`).
    var knownCheckpoint: (checkpoint: Checkpoint?, file: CheckpointFileIdentity?)?
    /// How many log entries a full verification reads at a time.
    var logPageSize = 4_096
    /// How many connections the last full verification scanned the rows on: 2 when the
    /// second one shared the snapshot, 1 when it could not (tests check both paths).
    package private(set) var lastScanConnections = 0
    /// When the checkpoint was last recorded (`saveCheckpoint`), and the head it then held
    /// (the view's, or a higher one another process recorded).
    var lastCheckpoint = Deadline.now
    var recordedHead: (generation: UInt64, head: [UInt8])?
    /// The entries the view walked past since the checkpoint on disk was last its head: a
    /// checkpoint another process of this member records below the view is compared with
    /// them (`WalkedHeads`).
    var walked: WalkedHeads

    /// The write in progress: its changes, and the set and ledger as they will be.
    private var pending: [RowChange] = []
    private var pendingSet = LtHash()
    private var pendingLedger: [[UInt8]: [UInt8]] = [:]
    private var pendingCount: Int = 0

    /// Thrown inside a write transaction when another writer claimed the generation first.
    struct LostRace: Error {}

    /// Thrown by a read outside a snapshot that needs one: its lookups saw two heads, or
    /// its catch-up met a re-key (whose scan of every row must see the rows as of the head).
    /// The read is done again inside a REPEATABLE READ snapshot.
    struct NeedsSnapshot: Error {}

    init(label: String, keychainID: [UInt8], store: PostgresItemStore, tables: TeamTables, member: MemberKeys,
         checkpointPath: String, checkpointKey: SymmetricKey) throws {
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
        KeychainError(errSecInvalidKeychain, "\(label): \(what)",
                      hint: "the server (or whoever can write to its database) changed the team keychain; compare `kc team head` with other members and see docs/team.md")
    }

    func tampered(_ what: String) -> KeychainError {
        Self.tampered(label, what)
    }

    /// The error for this member's expired membership (a runner past `--expires`): its
    /// token opens nothing, and an entry it signed now every other member would refuse.
    func expired(_ me: MemberRecord) -> KeychainError {
        KeychainError(errSecAuthFailed, "\(me.isRunner ? "the runner token" : "the membership") of \(me.name) in \(label) expired",
                      hint: "an admin issues a new one with `kc team add-runner`")
    }

    /// `tampered(_:)` for the keychain named `label` (a scan on another thread).
    static func tampered(_ label: String, _ what: String) -> KeychainError {
        KeychainError(errSecDecode, "\(label): \(what)", hint: "run `kc team verify`; see docs/team.md, \"What the server can and cannot do\"")
    }

    // MARK: - First open

    /// Checks the keychain from its genesis as a first open does: the genesis is the one the
    /// id names, the log is one hash chain from it to the head, every roster entry on that
    /// chain is signed by an admin of the roster before it, the head
    /// entry is signed by a member allowed to write it, this member's master-key wrap is
    /// signed by an admin and matches the committed key, every row hashes into the head's set
    /// hash, and nothing went back since this member's checkpoint.
    /// - Returns: the keys of the head's key generation.
    func openAndVerify() throws -> KeyHierarchy {
        try store.transaction(write: false) { try fullVerification(seen: try seenHeads()) }
    }

    /// Walks and checks the whole log (see `openAndVerify`). Every fact is taken from this
    /// one walk and never fetched again (issue 29, item 2): the entry at each generation in
    /// `seen` (this device's checkpoint, its view) is compared as the walk passes it, not read
    /// by a statement of its own that the server could answer from another branch.
    private func fullVerification(seen: [UInt64: [UInt8]]) throws -> KeyHierarchy {
        let snapshot = try exportSnapshot()
        guard let genesisBytes = try tables.genesis(), let serverHead = try tables.head() else {
            throw KeychainError(errSecNoSuchKeychain, "\(label) is not on the server (no keychain with its id)",
                                hint: "check the DSN, or whether the database was replaced")
        }
        if let highest = seen.keys.max(), serverHead.generation < highest {
            throw rollback(from: highest, to: serverHead.generation)
        }
        let now = Self.now
        // The rows are scanned in pieces that two connections claim in turn: a second one,
        // in this transaction's snapshot, from now on, and this one once it has walked the
        // log (both are checked against the head read here, as one set).
        let range = try store.seqRange()
        let pieces = ScanPieces(range: range)
        let capacity = range.map(Self.capacity) ?? 0
        let parallelScan = snapshot.flatMap { startParallelScan($0, pieces: pieces, capacity: capacity) }
        let genesis = try Genesis(encoded: genesisBytes, expecting: keychainID)
        guard serverHead.schemaVersion <= TeamFormat.version, serverHead.minWriterVersion <= TeamFormat.version else {
            throw KeychainError(errSecWrongSecVersion, "\(label) was written by a newer kc (format \(serverHead.schemaVersion))", hint: "upgrade kc")
        }
        // The whole log from the genesis to the head, as one hash chain, and along it the
        // chain of rosters from the genesis's root admin. An entry's kind is what its signed
        // bytes say, never the `kind` column: a roster entry (a removal) relabelled, or
        // deleted, would otherwise drop out of the roster chain while the entries after it
        // still led to the head (and a removed member could sign the head under the roster
        // before its removal).
        var current = try Roster([genesis.root])
        var previousRoster = keychainID
        var keyGen: UInt32 = 0
        var lastRoster: LogEntry?
        var previous = keychainID
        var last: LogEntry?
        var beforeHeadTime: UInt64 = 0
        var after: UInt64 = 0
        // The hashes walked past the lowest head this device saw (every generation, for a
        // device with none): what a checkpoint another process records later is compared with.
        let walkBase = seen.keys.min() ?? 0
        var walk = WalkedHeads(base: walkBase, head: seen[walkBase] ?? keychainID)
        paging: while after < serverHead.generation {
            let page = try tables.entries(after: after, limit: logPageSize)
            guard let lastOfPage = page.last?.generation else { break }
            for (g, bytes) in page {
                guard g <= serverHead.generation else { break paging }
                let e = try LogEntry(encoded: bytes, at: g)
                guard g == (last?.generation ?? 0) + 1, e.generation == g, e.previous == previous else {
                    throw serverError("entry \(g) of the log does not link to the entry before it: entries were hidden, replaced or reordered")
                }
                // The hash of the stored bytes (`LogEntry.hash(encoded:)`), not of the entry
                // encoded again: one encoding fewer per entry.
                previous = LogEntry.hash(encoded: bytes)
                if let saw = seen[g], saw != previous {
                    throw serverError("the entry at generation \(g) is not the one this device saw (a fork)")
                }
                if g > walkBase { walk.append(previous, at: g) }
                try checkTime(e, after: last?.time ?? 0, now: now)
                beforeHeadTime = last?.time ?? 0
                last = e
                guard e.kind == .roster else { continue }
                guard e.previousRoster == previousRoster else {
                    throw serverError("the roster entry at generation \(g) does not follow the one before it: roster entries were hidden, replayed or edited")
                }
                try checkFormat(e)
                guard let signer = current.member(e.signer), signer.role == .admin, signer.isValid(at: e.time),
                      e.isSigned(keychainID: keychainID, by: signer.signPublicKey) else {
                    throw serverError("the roster entry at generation \(g) is not signed by an admin of the roster before it: the member list was forged")
                }
                guard let roster = e.roster, e.rosterDigest == roster.digest,
                      e.keyGeneration == keyGen || e.keyGeneration == keyGen + 1, keyGen > 0 || e.keyGeneration == 1 else {
                    throw serverError("the roster entry at generation \(g) is inconsistent")
                }
                current = roster
                keyGen = e.keyGeneration
                previousRoster = previous
                lastRoster = e
            }
            after = lastOfPage
        }
        guard let lastRoster, let rosterEntryCommitment = Optional(lastRoster.masterKeyCommitment) else {
            throw serverError("the log has no roster: entries were hidden")
        }
        // The head entry, signed by someone allowed to write it under the last roster.
        guard let headEntry = last, headEntry.generation == serverHead.generation, previous == serverHead.head else {
            throw serverError("the head does not name the last entry of the log (generation \(serverHead.generation)): entries were hidden")
        }
        if headEntry.kind == .roster {
            guard headEntry == lastRoster else { throw serverError("the head is a roster entry the roster chain does not end with") }
        } else {
            try checkWriter(headEntry, roster: current, keyGeneration: keyGen, after: beforeHeadTime)
        }
        roster = current
        keyGeneration = keyGen
        commitment = rosterEntryCommitment
        rosterEntryHash = previousRoster
        guard let me else {
            throw KeychainError(errSecAuthFailed, "this device (\(member.fingerprint)) is not a member of \(label)",
                                hint: "an admin adds it with `kc team add NAME --key \(member.fingerprint)`; if it was removed, ask to be added again")
        }
        guard me.isValid(at: Self.now) else { throw expired(me) }
        let keys = try openMasterKey(generation: keyGen, signedBy: lastRoster)
        // Every row, against the head's set hash and count. A scan the second connection
        // could not make (or one that failed) is made again on this one, whose error is the
        // answer.
        var scanned = try Self.scan(store, pieces: pieces, capacity: capacity)
        if let parallelScan, scanned.pieces == pieces.count {
            // This connection claimed every piece (each is claimed once): the other has
            // none, and may still be waiting for a server connection (a pool of one behind
            // PgBouncer, busy with this transaction). It is not waited for.
            parallelScan.detach()
            lastScanConnections = 1
        } else if let parallelScan {
            if let other = try? parallelScan.join() {
                // The smaller into the larger (both reserved the whole range).
                if other.ledger.count > scanned.ledger.count {
                    var larger = other
                    try Self.merge(scanned, into: &larger, label: label)
                    scanned = larger
                } else {
                    try Self.merge(other, into: &scanned, label: label)
                }
                lastScanConnections = 2
            } else {
                // The pieces the other connection claimed are lost with it: all again here.
                scanned = try Self.scan(store, pieces: ScanPieces(range: nil), capacity: capacity)
                lastScanConnections = 1
            }
        } else {
            lastScanConnections = 1
        }
        try accept(scanned, expectedDigest: headEntry.setDigest, expectedCount: headEntry.count, at: serverHead.generation)
        generation = serverHead.generation
        head = serverHead.head
        lastTime = headEntry.time
        walked = walk
        return keys
    }

    /// Opens this member's master-key wrap of `generation`, checking the admin's signature
    /// over it and the commitment of the roster entry that made it.
    private func openMasterKey(generation keyGen: UInt32, signedBy entry: LogEntry) throws -> KeyHierarchy {
        guard let wrap = try tables.wrap(keyGeneration: keyGen, memberID: member.memberID) else {
            throw KeychainError(errSecAuthFailed, "\(label) holds no master key for this device at key generation \(keyGen)",
                                hint: "an admin adds it again with `kc team add`")
        }
        var admins = roster.adminSignKeys(at: entry.time)
        if let signer = roster.member(entry.signer) ?? nil, signer.role == .admin { admins.append(signer.signPublicKey) }
        let mk = try MasterKeyDelivery.open(sealed: wrap.sealed, signature: wrap.signature, keychainID: keychainID, keyGeneration: keyGen,
                                            member: member, adminSignKeys: admins, commitment: entry.masterKeyCommitment)
        return try KeyHierarchy(master: SymmetricKey(mk), keychainID: keychainID, keyGeneration: keyGen, blindKeyIDs: Schema.blindKeyIDs)
    }

    /// The ledger and set hash of every row, as a scan rebuilt them.
    struct ScannedRows: Sendable {
        var ledger: [[UInt8]: [UInt8]]
        var set: LtHash
        /// How many pieces of the scan this connection claimed.
        var pieces = 0
    }

    /// Exports this transaction's snapshot (`pg_export_snapshot`) for a second connection;
    /// nil when the server refuses (a standby, a pooler): the rows are then scanned on this
    /// connection. It must be the transaction's first statement: a refusal aborts the
    /// transaction (no savepoint helps: a subtransaction cannot export), which is then
    /// begun again, nothing having been read in it.
    private func exportSnapshot() throws -> String? {
        let c = store.connection
        let r: PGResult
        do {
            r = try c.execute("SELECT pg_export_snapshot()")
        } catch let e as KeychainError where e.status != errSecNotAvailable {
            c.rollback()
            try c.begin(readOnlySnapshot: true)
            return nil
        }
        return Self.snapshotName(r.text(0, 0))
    }

    /// The server's answer to `pg_export_snapshot()` when it can be spliced into `SET
    /// TRANSACTION SNAPSHOT '…'` (which takes no parameter, the one value kc does not bind):
    /// 1 to 64 of the characters of PostgreSQL's snapshot names, hex digits and dashes;
    /// nil for anything else (the scan then stays on one connection).
    static func snapshotName(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 64,
              text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) })
        else { return nil }
        return text
    }

    /// Starts a scan of the pieces it claims on a thread with a connection of its own that
    /// reads `snapshot`; nil when no thread starts.
    private func startParallelScan(_ snapshot: String, pieces: ScanPieces, capacity: Int) -> BackgroundThread<ScannedRows>? {
        let dsn = store.connection.dsn, insecure = store.connection.insecureTransport, keychainID = keychainID, label = label
        return try? BackgroundThread {
            let connection = try PostgresConnection(dsn: dsn, insecureTransport: insecure)
            try connection.begin(readOnlySnapshot: true)
            try connection.execute("SET TRANSACTION SNAPSHOT '\(snapshot)'")
            let rows = try Self.scan(PostgresItemStore(connection: connection, keychainID: keychainID, label: label), pieces: pieces, capacity: capacity)
            connection.rollback()
            return rows
        }
    }

    /// The ledger capacity to reserve for the rows of `range` of `seq` (unique per row, so
    /// an upper bound), at most 4 Mi entries (a server's range is a hint, not trusted).
    static func capacity(_ range: ClosedRange<Int64>) -> Int {
        Int(min(UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1, 1 << 22))
    }

    /// Reads the rows of the `pieces` this connection claims (inside `store`'s transaction)
    /// and rebuilds their ledger and set hash. Each row must also be of the key generation
    /// in force (its wrapped key opens later; here only its place and hash are checked).
    /// - Throws: errSecDecode for two rows of one item id or a malformed row.
    static func scan(_ store: PostgresItemStore, pieces: ScanPieces, capacity: Int = 0) throws -> ScannedRows {
        var ledger: [[UInt8]: [UInt8]] = [:]
        ledger.reserveCapacity(capacity)
        var set = LtHash()
        let claimed = try store.forEachRowUnordered(claiming: pieces) { row in
            let h = RowHash.of(row)
            guard ledger.updateValue(h, forKey: row.itemID) == nil else {
                throw tampered(store.label, "two rows have one item id")
            }
            set.add(h)
        }
        return ScannedRows(ledger: ledger, set: set, pieces: claimed)
    }

    /// Adds the rows another connection's scan read to `rows`.
    /// - Throws: errSecDecode when both scans read one item id.
    static func merge(_ other: ScannedRows, into rows: inout ScannedRows, label: String) throws {
        rows.ledger.reserveCapacity(rows.ledger.count + other.ledger.count)
        for (id, h) in other.ledger {
            guard rows.ledger.updateValue(h, forKey: id) == nil else { throw tampered(label, "two rows have one item id") }
        }
        rows.set.add(other.set)
    }

    /// Reads every row, rebuilding the ledger and set hash, and compares them with a signed
    /// entry's.
    private func scanRows(keys: KeyHierarchy, expectedDigest: [UInt8], expectedCount: UInt64, at g: UInt64) throws {
        try accept(try Self.scan(store, pieces: ScanPieces(range: nil), capacity: ledger.count), expectedDigest: expectedDigest, expectedCount: expectedCount, at: g)
    }

    /// Takes `rows` as the view's ledger and set hash when their count and set hash are a
    /// signed entry's (at generation `g`).
    private func accept(_ rows: ScannedRows, expectedDigest: [UInt8], expectedCount: UInt64, at g: UInt64) throws {
        guard UInt64(rows.ledger.count) == expectedCount, rows.set.digest == expectedDigest else {
            let what = UInt64(rows.ledger.count) == expectedCount
                ? "rows were edited, replayed or swapped"
                : "the server holds \(rows.ledger.count) rows where the signed log counts \(expectedCount): rows were deleted or put back"
            throw tampered("the items do not match the signed log at generation \(g) (\(what))")
        }
        ledger = rows.ledger
        set = rows.set
    }

    /// Refuses an entry of a format this build does not read.
    private func checkFormat(_ e: LogEntry) throws {
        guard e.format <= TeamFormat.version else {
            throw KeychainError(errSecWrongSecVersion, "\(label) has entries of format \(e.format); this kc reads up to \(TeamFormat.version)", hint: "upgrade kc")
        }
        guard e.format >= TeamFormat.version else {
            throw serverError("entry \(e.generation) claims the older format \(e.format): a downgrade")
        }
    }

    /// Checks an items or heartbeat entry: signed by a valid member who may write, under the
    /// key generation and roster in force. The signer chooses the time it signs, so an
    /// expiry is also checked against `previousTime`, the time of the entry before: once the
    /// log shows the expiry passed, a backdated entry of the expired member is refused.
    private func checkWriter(_ e: LogEntry, roster: Roster, keyGeneration keyGen: UInt32, after previousTime: UInt64) throws {
        try checkFormat(e)
        guard let signer = roster.member(e.signer) else {
            throw serverError("entry \(e.generation) is signed by someone who is not a member: a forged write")
        }
        guard e.isSigned(keychainID: keychainID, by: signer.signPublicKey) else {
            throw serverError("entry \(e.generation) does not carry \(signer.name)'s signature: a forged or edited write")
        }
        guard signer.role.mayWrite else {
            throw serverError("entry \(e.generation) is signed by \(signer.name), a reader, who may not write: a reader (or the server with a reader's key) forged a write")
        }
        guard signer.isValid(at: e.time), signer.isValid(at: previousTime) else {
            throw serverError("entry \(e.generation) is signed by \(signer.name) after its membership expired")
        }
        guard e.keyGeneration == keyGen, e.rosterDigest == roster.digest else {
            throw serverError("entry \(e.generation) was written under another roster or key generation: entries were hidden or reordered")
        }
    }

    /// How long a write retries lost races before it gives up (a file keychain's busy timeout).
    static let busyTimeout = 30.0

    package static var now: UInt64 { UInt64(max(0, time(nil))) }

    // MARK: - Catching up

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
            throw KeychainError(errSecInternalError, "\(label): an operation used the keys of key generation \(keys.keyGeneration) where the verified view is at \(keyGeneration); nothing was read or written",
                                hint: "try again; please report this")
        }
        // The ledger is not copied (at 100,000 rows a copy per read cost milliseconds): the
        // rows `apply` changes are journalled and put back. A rescan assigns the ledger
        // last, after which nothing throws.
        let saved = (generation, head, keyGeneration, roster, rosterEntryHash, commitment, set, lastTime)
        let savedWalk = walked
        ledgerJournal = []
        journalling = true
        defer { journalling = false; ledgerJournal = [] }
        do {
            markedHash = nil
            return try catchUpEntries(keys, to: seen, mayRescan: mayRescan, mark: mark)
        } catch {
            (generation, head, keyGeneration, roster, rosterEntryHash, commitment, set, lastTime) = saved
            walked = savedWalk
            for (itemID, hash) in ledgerJournal.reversed() { ledger[itemID] = hash }
            throw error
        }
    }

    /// `catchUp`'s work, which may leave the view halfway when it throws.
    private func catchUpEntries(_ keys: KeyHierarchy, to seen: TeamHead?, mayRescan: Bool, mark: UInt64?) throws -> KeyHierarchy {
        // A token past `--expires` opens nothing, in a running agent as at a first open.
        if let me, !me.isValid(at: Self.now) { throw expired(me) }
        guard let serverHead = try seen ?? tables.head() else {
            throw serverError("the team keychain is gone from the server")
        }
        guard serverHead.generation >= generation else {
            throw serverError("the server went back from generation \(generation) to \(serverHead.generation): it was restored from an older dump (rollback)")
        }
        // What another process of this member saw since (its checkpoint, ahead of this view
        // after a `kc team remove`): the server may not go below it, and the entry it names
        // must be on the chain this catch-up walks.
        let floor = try checkpointOnDisk()
        if let floor {
            guard serverHead.generation >= floor.generation else { throw rollback(from: floor.generation, to: serverHead.generation) }
            guard floor.generation != generation || floor.head == head else {
                throw serverError("the server shows another entry at generation \(generation) than this device saw (a fork)")
            }
            // A checkpoint below the view (another process, shown the log from another
            // connection, recorded it since): its entry must be the one this view walked.
            guard floor.generation > generation || walked.agrees(at: floor.generation, head: floor.head) else {
                throw serverError("this device recorded another entry at generation \(floor.generation) than the one its view walked past (a fork: the server shows this device's processes two histories)")
            }
        }
        if serverHead.generation == generation {
            guard serverHead.head == head else { throw serverError("the server shows another entry at generation \(generation) than this device saw (a fork)") }
            return keys
        }
        let entries = try tables.entries(after: generation, through: serverHead.generation)
        guard UInt64(entries.count) == serverHead.generation - generation else {
            throw serverError("\(serverHead.generation - generation - UInt64(entries.count)) entries between generation \(generation) and \(serverHead.generation) are missing: the server hid them")
        }
        var current = keys
        var rescan: LogEntry?
        var last: LogEntry?
        let now = Self.now
        for (g, bytes) in entries {
            let e = try LogEntry(encoded: bytes, at: g)
            guard e.generation == generation + 1, g == e.generation, e.previous == head else {
                throw serverError("entry \(g) does not link to the entry before it: entries were replaced, replayed or reordered")
            }
            if let floor, floor.generation == g, floor.head != e.hash {
                throw serverError("the entry at generation \(g) is not the one this device saw (a fork)")
            }
            if g == mark { markedHash = e.hash }
            switch e.kind {
            // After a re-key every row changed without a change list: the ledger is rebuilt by
            // the scan below, against the last entry's set hash, so the entries after the
            // re-key are checked for their signer only.
            case .items:
                try checkWriter(e, roster: roster, keyGeneration: keyGeneration, after: lastTime)
                guard rescan == nil else { break }
                try apply(e.changes, at: g)
                guard set.digest == e.setDigest, UInt64(ledger.count) == e.count else {
                    throw tampered("entry \(g)'s set hash does not match its changes: the log was edited")
                }
            case .heartbeat:
                try checkWriter(e, roster: roster, keyGeneration: keyGeneration, after: lastTime)
                guard rescan == nil else { break }
                guard set.digest == e.setDigest, UInt64(ledger.count) == e.count else { throw tampered("heartbeat \(g) names another set of rows") }
            case .roster:
                try checkFormat(e)
                guard let signer = roster.member(e.signer), signer.role == .admin, signer.isValid(at: e.time),
                      e.isSigned(keychainID: keychainID, by: signer.signPublicKey) else {
                    throw serverError("roster entry \(g) is not signed by an admin: the member list was forged")
                }
                guard let newRoster = e.roster, e.rosterDigest == newRoster.digest, e.previousRoster == rosterEntryHash else {
                    throw serverError("roster entry \(g) does not follow the roster before it")
                }
                let signerRecord = signer
                roster = newRoster
                rosterEntryHash = e.hash
                if e.rekeyed {
                    guard mayRescan else { throw NeedsSnapshot() }
                    guard e.keyGeneration == keyGeneration + 1 else { throw serverError("roster entry \(g) skips a key generation") }
                    guard me != nil else {
                        throw KeychainError(errSecAuthFailed, "this device was removed from \(label); it reads nothing written since",
                                            hint: "ask an admin to add it again")
                    }
                    keyGeneration = e.keyGeneration
                    commitment = e.masterKeyCommitment
                    var withSigner = e
                    withSigner.signer = signerRecord.memberID
                    current = try openMasterKey(generation: keyGeneration, signedBy: withSigner)
                    rescan = e
                } else {
                    guard e.keyGeneration == keyGeneration, e.masterKeyCommitment == commitment,
                          rescan != nil || (set.digest == e.setDigest && UInt64(ledger.count) == e.count) else {
                        throw serverError("roster entry \(g) changes the keys or rows without a re-key")
                    }
                    guard me != nil else {
                        throw KeychainError(errSecAuthFailed, "this device was removed from \(label)", hint: "ask an admin to add it again")
                    }
                }
            }
            try checkTime(e, after: lastTime, now: now)
            generation = g
            head = e.hash
            lastTime = e.time
            walked.append(e.hash, at: g)
            last = e
        }
        guard head == serverHead.head else { throw serverError("the head does not name the last entry of the log") }
        if rescan != nil, let last {
            try scanRows(keys: current, expectedDigest: last.setDigest, expectedCount: last.count, at: last.generation)
        }
        saveCheckpoint()
        return current
    }

    /// Refuses a head older than `maxStaleness`: a server that keeps showing an old head
    /// (a freeze) cannot forge a newer signed entry, so the age of the newest one shows it.
    func checkFreshness() throws {
        let now = Self.now
        guard maxStaleness > 0, now > lastTime, now - lastTime > maxStaleness else { return }
        throw serverError("the newest signed entry is \(now - lastTime) s old, more than the \(maxStaleness) s allowed (KC_TEAM_MAX_STALENESS): the server may be freezing the keychain at an old head, or no writer has sent a heartbeat")
    }

    /// Applies an items entry's row changes to the ledger and set hash (journalling what
    /// each row held before, inside a catch-up).
    private func apply(_ changes: [RowChange], at g: UInt64) throws {
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

    /// The state `Keychain` reads and writes under: the generation and count of the view.
    private func state(generation g: UInt64, count: Int) -> StateRecord {
        StateRecord(minWriterVersion: TeamFormat.version, generation: g, itemCount: UInt64(count), accumulator: [],
                    idleTimeout: 15 * 60, maxTimeout: 12 * 60 * 60, mac: [])
    }

    // MARK: - HeaderAuthority

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
                    let current = try catchUp(latest, mayRescan: false)
                    if current !== latest { adopt(current); latest = current }
                    guard let me, me.role.mayWrite else {
                        throw KeychainError(errSecReadOnly, "\(label) is read-only for \(self.me?.name ?? "this device"), a reader",
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
                    var e = LogEntry(kind: pending.isEmpty ? .heartbeat : .items, generation: generation + 1, previous: head, keyGeneration: keyGeneration,
                                     signer: member.memberID, time: nextEntryTime, changes: pending, setDigest: pendingSet.digest,
                                     count: UInt64(pendingCount), rosterDigest: roster.digest)
                    e.sign(keychainID: keychainID, with: member)
                    try tables.append(generation: e.generation, kind: Int16(e.kind.rawValue), entry: e.encoded, newHead: e.hash, keyGeneration: nil)
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
                    throw KeychainError(errSecNotAvailable, "\(label): other writers kept winning for \(Int(Self.busyTimeout)) s; nothing was written", hint: "try again")
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

    /// Catches up across a re-key in a REPEATABLE READ snapshot: a write's or an admin's
    /// READ COMMITTED transaction cannot scan every row as of the re-key's head (a commit
    /// during the scan would make a genuine row look tampered with). Answers the keys to
    /// go on with, adopted by the keychain.
    func catchUpInSnapshot(_ keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws -> KeyHierarchy {
        let current = try store.transaction(write: false) { try catchUp(keys) }
        if current !== keys { adopt(current) }
        return current
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

    package func account(removing old: ItemRow?, adding new: ItemRow?, keys: KeyHierarchy) throws {
        guard let id = (old ?? new)?.itemID, let cls = (old ?? new)?.classCode else { return }
        let oldHash = old.map(RowHash.of) ?? []
        let newHash = new.map(RowHash.of) ?? []
        if !oldHash.isEmpty { pendingSet.remove(oldHash); pendingCount -= 1 }
        if !newHash.isEmpty { pendingSet.add(newHash); pendingCount += 1 }
        pending.append(RowChange(itemID: id, classCode: cls, oldVersion: old?.rowVersion ?? 0, newVersion: new?.rowVersion ?? 0,
                                 oldHash: oldHash, newHash: newHash))
        pendingLedger[id] = newHash
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

    package func verifyAll(keys: KeyHierarchy) throws -> KeyHierarchy {
        let current = try store.transaction(write: false) { try fullVerification(seen: try seenHeads()) }
        saveCheckpoint(force: true)
        return current
    }

    package func admit(_ attributes: [String: AttributeValue]) throws {
        if case .string(let pdmn)? = attributes["pdmn"], pdmn.hasSuffix("u") {
            throw KeychainError(errSecParam, "a this-device-only item cannot go into \(label): a team keychain is shared by every member's devices",
                                hint: "choose another accessibility (--accessible after-first-unlock or when-unlocked), or keep it in a file keychain")
        }
        if let flags = attributes[kcAttrAccessControlFlags], flags != .int(0) {
            throw KeychainError(errSecParam, "an item that requires user presence cannot go into \(label): a team keychain has no password of its own to ask for",
                                hint: "keep it in a file keychain")
        }
    }

    package func unsupported(_ operation: String) -> KeychainError? {
        KeychainError(errSecUnimplemented, "\(operation) is not supported for the team keychain \(label)",
                      hint: "team keychains are managed with `kc team` (docs/team.md)")
    }

    package func didLock() {
        saveCheckpoint(force: true)
    }

    /// Records the view's head when the checkpoint does not hold it yet (a read or write
    /// within a second of the last recording left it), not waiting for another writer's
    /// lock: tried again at the next idle second.
    package func idle() {
        guard recordedHead?.generation != generation || recordedHead?.head != head,
              Deadline.now.nanoseconds &- lastCheckpoint.nanoseconds >= 1_000_000_000 else { return }
        try? recordCheckpoint(wait: 0)
    }
}
