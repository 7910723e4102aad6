import KeychainCore
import POSIXSupport
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// The device's checkpoint (`docs/format.md` §9.6) as the team authority uses it: never moved
/// backwards (`Checkpoint.advance`), re-read when another process of this member moved it,
/// checked against the server's head in one place (`headsToPass`, the floor) and compared
/// with the log only as the one verified walk passes it (issue 29, items 1 and 2).
extension TeamAuthority {
    /// The heads this device saw that a walk of the log to `serverHead` must pass (the
    /// checkpoint floor): the one place they are checked against the server's head (a
    /// rollback) and the view (a fork); the walk (`LogChain`) compares each with the entry
    /// it passes at its generation.
    /// - Parameter origin: where the walk starts. From the genesis, every head this device
    ///   saw (its checkpoint's and, once opened, the view's); from the view, the
    ///   checkpoint's when it is above the view.
    func headsToPass(to serverHead: TeamHead, from origin: LogChain.Origin) throws -> [UInt64: [UInt8]] {
        switch origin {
        case .genesis:
            let seen = try seenHeads()
            if let highest = seen.keys.max(), serverHead.generation < highest {
                throw rollback(from: highest, to: serverHead.generation)
            }
            return seen
        case .view:
            return try viewAndFloor(serverHead)
        }
    }

    /// The heads this device saw, by generation: its checkpoint's and, once opened, the
    /// verified view's. A full verification must find each on the one chain it walks.
    private func seenHeads() throws -> [UInt64: [UInt8]] {
        var seen: [UInt64: [UInt8]] = [:]
        if let cp = try checkpointOnDisk() { seen[cp.generation] = cp.head }
        if generation > 0 {
            if let other = seen[generation], other != head {
                throw serverError("this device saw two entries at generation \(generation) (a fork)")
            }
            seen[generation] = head
        }
        return seen
    }

    /// The server's head against the view and against what another process of this member
    /// saw since (its checkpoint, ahead of this view after a `kc team remove`): the server
    /// may not go below either, at the view's generation it must show the view's head, and
    /// the entry the checkpoint names must be on the chain the view walked (at or below it)
    /// or walks next (above it).
    /// - Returns: the checkpoint's head when it is above the view, for the walk to pass.
    private func viewAndFloor(_ serverHead: TeamHead) throws -> [UInt64: [UInt8]] {
        guard serverHead.generation >= generation else {
            throw serverError("the server went back from generation \(generation) to \(serverHead.generation): it was restored from an older dump (rollback)")
        }
        let floor = try checkpointOnDisk()
        if let floor {
            guard serverHead.generation >= floor.generation else { throw rollback(from: floor.generation, to: serverHead.generation) }
            guard floor.generation != generation || floor.head == head else {
                throw serverError("the server shows another entry at generation \(generation) than this device saw (a fork)")
            }
            // A checkpoint below the view (another process, shown the log from another
            // connection, recorded it since): its entry must be the one this view walked.
            guard floor.generation > generation || walked.agrees(at: floor.generation, head: floor.head) else {
                throw serverError(
                    "this device recorded another entry at generation \(floor.generation) than the one its view walked past (a fork: the server shows this device's processes two histories)"
                )
            }
        }
        guard serverHead.generation != generation || serverHead.head == head else {
            throw serverError("the server shows another entry at generation \(generation) than this device saw (a fork)")
        }
        guard let floor, floor.generation > generation else { return [:] }
        return [floor.generation: floor.head]
    }

    /// The error for a head below one this device saw.
    func rollback(from seen: UInt64, to shown: UInt64) -> KeychainError {
        serverError("the server went back from generation \(seen), which this device saw, to \(shown): it was restored from an older dump (rollback)")
    }

    /// This device's checkpoint on disk, read again only when the file changed (another
    /// process of this member moved it: `kc team remove` runs in its own process).
    func checkpointOnDisk() throws -> Checkpoint? {
        var st = stat()
        let identity = lstat(checkpointPath, &st) == 0 ? CheckpointFileIdentity(st) : nil
        if let known = knownCheckpoint, known.file == identity { return known.checkpoint }
        let cp = identity == nil ? nil : try Checkpoint.read(at: checkpointPath, key: checkpointKey)
        knownCheckpoint = (cp, identity)
        return cp
    }

    /// Records the verified head in the checkpoint, at most once a second unless `force`.
    /// Never moves it backwards (`Checkpoint.advance`): a view older than what another
    /// process of this member recorded (a `kc team remove` since) leaves the file as it is;
    /// nor over a checkpoint below the view that names another entry than the one the view
    /// walked past (a fork, which the next catch-up names).
    func saveCheckpoint(force: Bool = false) {
        guard force || Deadline.now.nanoseconds &- lastCheckpoint.nanoseconds >= 1_000_000_000 else { return }
        try? recordCheckpoint()
    }

    /// Records the verified head in the checkpoint now, waiting up to `wait` seconds for
    /// another writer's lock (see `saveCheckpoint`).
    /// - Returns: what the file holds afterwards (`Checkpoint.advance`).
    /// - Throws: what `Checkpoint.advance` throws: the lock not had in time, a fork, an
    ///   altered file, a full disk.
    @discardableResult
    func recordCheckpoint(wait: Int = Checkpoint.lockWait) throws -> Checkpoint {
        let cp = Checkpoint(
            generation: generation, head: head, setDigest: set.digest, count: UInt64(ledger.count),
            keyGeneration: keyGeneration, time: lastTime)
        let walked = walked
        let kept = try cp.advance(at: checkpointPath, key: checkpointKey, wait: wait, agrees: walked.agrees)
        lastCheckpoint = .now
        recordedHead = kept.generation >= generation ? (generation, head) : nil
        if kept.generation == generation, kept.head == head { self.walked.restart(at: generation, head: head) }
        return kept
    }

    package func didLock() {
        saveCheckpoint(force: true)
    }

    /// Records the view's head when the checkpoint does not hold it yet (a read or write
    /// within a second of the last recording left it), not waiting for another writer's
    /// lock: tried again at the next idle second.
    package func idle() {
        guard recordedHead?.generation != generation || recordedHead?.head != head,
            Deadline.now.nanoseconds &- lastCheckpoint.nanoseconds >= 1_000_000_000
        else { return }
        try? recordCheckpoint(wait: 0)
    }

    /// Records a roster change this process committed (a removal) in the checkpoint,
    /// waiting for another writer's lock as long as a command may (`commandLockWait`).
    /// When another process of this member (its team agent) recorded a higher head
    /// meanwhile, this change must be on that head's chain: the view catches up to the
    /// server's head (a verified walk, which compares the checkpoint as it passes it, or
    /// names a rollback below it) and records again.
    /// - Parameters: keys: the keys in force after the change; adopt: takes new ones.
    /// - Throws: saying the change is committed but not recorded: errSecInvalidKeychain
    ///   when the server showed this process and the other two branches (a fork, a
    ///   rollback), else errSecNotAvailable. Left unrecorded, a restore of a dump from
    ///   before the change would be accepted by this device.
    func recordCommittedChange(keys: KeyHierarchy, adopt: (KeyHierarchy) -> Void) throws {
        let committed = generation
        do {
            if try recordCheckpoint(wait: Checkpoint.commandLockWait).generation > generation {
                _ = try catchUpInSnapshot(keys, adopt: adopt)
                try recordCheckpoint(wait: Checkpoint.commandLockWait)
            }
        } catch let e as KeychainError {
            throw KeychainError(
                e.status == errSecInvalidKeychain ? e.status : errSecNotAvailable,
                "\(label): the change is committed (generation \(committed)), but this device's checkpoint does not hold it: \(e.message); until it does, a restore of an older dump that undoes it is not noticed here",
                hint:
                    "run `kc team head -k \(label)` once the other kc process is done (it records the checkpoint), and compare the head with another member's",
                cause: e.cause)
        }
    }
}

/// Which file a checkpoint was read from: a rename over it (every write is one) or a change
/// in place gives another identity.
struct CheckpointFileIdentity: Equatable {
    var device: UInt64, inode: UInt64, size: Int64
    var modified: (seconds: Int, nanoseconds: Int), changed: (seconds: Int, nanoseconds: Int)

    /// The identity of the file `st` describes.
    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = (st.st_mtim.tv_sec, st.st_mtim.tv_nsec)
        changed = (st.st_ctim.tv_sec, st.st_ctim.tv_nsec)
    }

    static func == (a: Self, b: Self) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified == b.modified && a.changed == b.changed
    }
}
