import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// What this device last verified of a team keychain's log (`docs/format.md` §9.6): the
/// generation and hash of the newest entry, the set hash and item count after it, the key
/// generation and the time of the newest signed entry or heartbeat. A head older than the
/// checkpoint is a rollback, the same generation with another hash a fork, and an old
/// `time` a freeze.
///
/// Stored in `$XDG_STATE_HOME/kc/NAME-<first 8 hex of the keychain id>.checkpoint` (else
/// `~/.local/state/kc`), 0600, replaced atomically and never by a lower generation
/// (`advance(at:key:)`), and MAC'd with a key derived from the
/// member seed, so that another program of this user cannot move it back unnoticed
/// (deleting it is noticed only as a first join: the full verification scan).
///
///     let key = try Checkpoint.key(seed: keys.seed)
///     let path = Checkpoint.path(stateDirectory: Checkpoint.stateDirectory, name: "infra", keychainID: id)
///     if let last = try Checkpoint.read(at: path, key: key) { … }
///     try Checkpoint(generation: 42, head: h, setDigest: d, count: 7, keyGeneration: 1, time: now).advance(at: path, key: key)
package struct Checkpoint: Sendable, Equatable {
    /// The first four bytes of a checkpoint file.
    static let magic = Array("KCCP".utf8)
    /// The version this kc writes and reads.
    static let version: UInt32 = 1
    /// The label of the MAC key and of the MAC's input.
    static let label = "kc team checkpoint v1"
    /// The MAC's length.
    static let macBytes = 32
    /// How long (seconds) `advance` waits for another writer's lock, by default (the team
    /// agent, which must not keep a lock of the keychain waiting).
    package static let lockWait = 2
    /// How long (seconds) a `kc team` command waits for it after committing a roster change
    /// (a removal), which it may not leave unrecorded: a restore of a dump from before it
    /// would then go unnoticed.
    package static let commandLockWait = 30

    /// The generation of the newest verified log entry.
    package var generation: UInt64
    /// The hash of that entry (the head).
    package var head: [UInt8]
    /// The set hash (`LtHash.digest`) after it.
    package var setDigest: [UInt8]
    /// The number of items after it.
    package var count: UInt64
    /// The key generation in force.
    package var keyGeneration: UInt32
    /// The time (seconds since 1970) of the newest signed entry or heartbeat seen.
    package var time: UInt64

    /// A checkpoint of the given values.
    package init(generation: UInt64, head: [UInt8], setDigest: [UInt8], count: UInt64, keyGeneration: UInt32, time: UInt64) {
        self.generation = generation
        self.head = head
        self.setDigest = setDigest
        self.count = count
        self.keyGeneration = keyGeneration
        self.time = time
    }

    // MARK: Where

    /// `$XDG_STATE_HOME/kc` (an absolute one), else `$HOME/.local/state/kc`.
    package static var stateDirectory: String { PrivateFiles.stateDirectory }

    /// `stateDirectory/NAME-<first 8 hex digits of the keychain id>.checkpoint`.
    package static func path(stateDirectory: String, name: String, keychainID: [UInt8]) -> String {
        stateDirectory + "/" + name + "-" + MemberKeys.hex(Array(keychainID.prefix(4))) + ".checkpoint"
    }

    // MARK: Key

    /// The MAC key: BLAKE2b-256 keyed with the member seed of `"kc team checkpoint v1"`.
    /// - Throws: `errSecParam` for a seed that is not 32 bytes; `errSecAllocate` when secure
    ///   memory cannot be had.
    package static func key(seed: borrowing SecureBytes) throws -> SymmetricKey {
        guard seed.count == MemberKeys.seedBytes else {
            throw KeychainError(errSecParam, "a member seed has 32 bytes, not \(seed.count)")
        }
        var derived = seed.withUnsafeBytes { Hashing.blake2b(Array(label.utf8), key: $0, length: 32) }
        defer { Sodium.wipe(&derived) }
        return SymmetricKey(try SecureBytes(copying: derived, guarded: true))
    }

    // MARK: Bytes

    /// `magic ‖ u32 version ‖ u64 generation ‖ lp(head) ‖ lp(set_digest) ‖ u64 count ‖
    /// u32 key_generation ‖ u64 time`.
    private var body: [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.raw(Self.magic)
        w.u32(Self.version)
        w.u64(generation)
        w.lengthPrefixed(head)
        w.lengthPrefixed(setDigest)
        w.u64(count)
        w.u32(keyGeneration)
        w.u64(time)
        return w.bytes
    }

    /// BLAKE2b-256 keyed with the checkpoint key of `label("kc team checkpoint v1") ‖ body`.
    private static func mac(_ body: [UInt8], key: SymmetricKey) -> [UInt8] {
        var w = ByteWriter(capacity: body.count + 32)
        w.label(label)
        w.raw(body)
        return Hashing.mac(w.bytes, key: key, length: macBytes)
    }

    // MARK: Read and write

    /// Reads a checkpoint; nil when there is none.
    /// - Throws: `errSecDecode` when its MAC does not verify ("altered") or it is not a
    ///   checkpoint; `errSecParam` for a link or a file others can read.
    package static func read(at path: String, key: SymmetricKey) throws -> Checkpoint? {
        guard let bytes = try PrivateFiles.read(path) else { return nil }
        guard bytes.count > macBytes else {
            throw KeychainError(errSecDecode, "the checkpoint \(path) is truncated: it was altered")
        }
        let body = Array(bytes[..<(bytes.count - macBytes)])
        let stored = Array(bytes[(bytes.count - macBytes)...])
        guard Sodium.constantTimeEqual(mac(body, key: key), stored) else {
            throw KeychainError(
                errSecDecode, "the checkpoint \(path) was altered (its MAC does not verify)",
                hint: "remove it to verify the whole keychain again, if you know why it changed")
        }
        var r = ByteReader(body)
        guard r.raw(magic.count) == magic, r.u32() == version, let generation = r.u64(),
            let head = r.lengthPrefixed(max: 64), let setDigest = r.lengthPrefixed(max: 64),
            let count = r.u64(), let keyGeneration = r.u32(), let time = r.u64(), r.isAtEnd
        else {
            throw KeychainError(errSecDecode, "the checkpoint \(path) is not one this kc can read")
        }
        return Checkpoint(
            generation: generation, head: head, setDigest: setDigest, count: count,
            keyGeneration: keyGeneration, time: time)
    }

    /// Records the checkpoint, never moving it backwards: under an exclusive lock on its
    /// folder (`flock`, which every process of this user writing a checkpoint takes), the
    /// file is read and replaced only when it holds a lower generation (or none). Every
    /// writer goes through here: `kc team remove` in its own process and the team agent's
    /// older view locking afterwards both keep the highest (issue 29, item 1).
    /// The file is replaced atomically: a new 0600 file, flushed, renamed over the old one,
    /// the folder flushed; the folder (0700) is made when missing.
    /// - Parameter wait: how long (seconds) to wait for another writer's lock.
    /// - Parameter agrees: whether the entry a lower checkpoint on disk names (generation,
    ///   head) is on the chain the caller's view walked; when not, the view is on a fork
    ///   (another process of this member was shown another branch) and nothing is written.
    /// - Returns: what the file holds afterwards: `self`, or the higher (or same-generation)
    ///   checkpoint that was kept. A caller whose view has that generation with another head
    ///   was shown a fork.
    /// - Throws: `errSecDecode` when the file on disk was altered (it is left for the next
    ///   open to refuse); `errSecInvalidKeychain` when `agrees` refuses the lower checkpoint;
    ///   `errSecIO`, `errSecReadOnly` or `errSecDiskFull`.
    @discardableResult
    package func advance(
        at path: String, key: SymmetricKey, wait: Int = lockWait,
        agrees: (_ generation: UInt64, _ head: [UInt8]) -> Bool = { _, _ in true }
    ) throws -> Checkpoint {
        let folder = FileSafety.parentDirectory(of: path)
        try FileSafety.makeDirectories(folder)
        let lock = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else {
            let e = errno
            throw KeychainError(errSecIO, "cannot open \(folder) to lock it: \(String(cString: strerror(e)))", cause: .errno(e))
        }
        defer { close(lock) }
        // Holders keep the lock for one read and one write; a holder stopped or stuck must not
        // make a lock of the keychain (which records the checkpoint) wait: at most
        // `wait` seconds, then the checkpoint is left as it is.
        var waited = 0
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR else {
                throw KeychainError(errSecIO, "cannot lock \(folder): \(String(cString: strerror(e)))", cause: .errno(e))
            }
            guard waited < wait * 200 else {
                throw KeychainError(
                    errSecNotAvailable, "another process kept the checkpoints in \(folder) locked for \(wait) s; the checkpoint was not recorded")
            }
            usleep(5_000)
            waited += 1
        }
        if let kept = try Self.read(at: path, key: key) {
            if kept.generation >= generation { return kept }
            guard agrees(kept.generation, kept.head) else {
                throw KeychainError(
                    errSecInvalidKeychain,
                    "the checkpoint \(path) names another entry at generation \(kept.generation) than the one this view walked past (a fork); it was left as it is"
                )
            }
        }
        let body = self.body
        try PrivateFiles.replace(path, bytes: body + Self.mac(body, key: key))
        return self
    }
}
