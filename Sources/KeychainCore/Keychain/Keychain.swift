#if canImport(Glibc)
import Glibc
#endif

/// One keychain file, opened with its password: the object every SecItem call runs
/// against. There is no hidden global keychain; a program opens the one it wants.
///
///     let password = try SecureBytes(copying: Array("hunter2".utf8))
///     let keychain = try Keychain.create(at: "/home/me/.local/share/kc/login.keychain-db",
///                                        password: password, profile: .moderate)
///     try keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "github.com",
///                       kSecAttrAccount: "alice", kSecValueData: Data("token".utf8)])
///
/// Not thread-safe: use one `Keychain` per thread (the agent serialises its use).
public final class Keychain {
    /// The format version this build writes (`docs/format.md`).
    /// 2: every stored column of every row is covered by the accumulator (issue 15).
    /// 3: generic passwords may carry a Secret Service map, searched by pair (issue 17).
    /// 4: class keys: after-first-unlock items are sealed under their own class key (issue 18).
    /// 5: the header MAC covers the whole password record, every wrap of the master key and
    ///    every KDF field (issue 29).
    /// 6: key slots beyond the password slot (`kc_keyslots`: a recovery key; a TPM2 slot's
    ///    layout), every one inside the record the header MAC covers (issue 35).
    static let formatVersion: UInt32 = 6
    /// The lowest kc format version that may write files this build writes: a format-1 kc
    /// would fold rows into the accumulator the old way, a format-2 kc would not keep the
    /// pair index (`kc_pairs`) of the rows it writes, a format-3 kc would seal every item
    /// under the when-unlocked class key, a format-4 kc would write a header MAC that leaves
    /// the password record out, a format-5 kc would not know the key slots it must keep
    /// in the record it rewrites.
    static let writerVersion: UInt32 = 6
    /// Default idle and absolute auto-lock timeouts stored in a new keychain (seconds).
    static let defaultIdleTimeout: UInt64 = 15 * 60
    static let defaultMaxTimeout: UInt64 = 12 * 60 * 60
    /// The longest auto-lock timeout: one year.
    public static let maxTimeout: UInt64 = 365 * 24 * 60 * 60

    /// The keychain file's path.
    public let path: String
    /// Where the rows and the header live: the seam below the keychain (`ItemStore`).
    let store: any ItemStore
    /// The keys held: all of them while unlocked; after `lock(keepingAfterFirstUnlock:)`
    /// only those that read after-first-unlock items; nil once locked entirely. Each
    /// hierarchy it ever holds is one `revocation` zeroes.
    var keys: KeyHierarchy? {
        didSet { if let keys { revocation.watch(keys) } }
    }
    /// What another thread uses to make the keys unusable at once, during an operation
    /// (`KeyRevocation`: the team agent's lock and stop while it waits for a server).
    public let revocation: KeyRevocation
    /// The highest header generation seen: a lower one later means a rolled-back file.
    var highestGeneration: UInt64 = 0
    /// The store as it was when this process last verified every row (or wrote itself);
    /// nil before the first check. A store found different is verified again before use.
    var verifiedStamp: ChangeStamp?
    /// The rows the last integrity scan found, with this process's own writes applied:
    /// every row a lookup reads must be one of them.
    var rowLedger = RowLedger()
    /// The keychain record whose master-key wrap this process opened with the password:
    /// its KDF parameters are authenticated (they are in the wrap's associated data), so a
    /// password change starts from them, never from what the file says later.
    var openedRecord: KeychainRecord?
    /// What vouches for the rows of a team keychain (its signed log); nil for a file, whose
    /// header MAC and accumulator do (`HeaderAuthority`).
    package private(set) var authority: (any HeaderAuthority)?

    init(path: String, store: any ItemStore, keys: KeyHierarchy, revocation: KeyRevocation = KeyRevocation()) {
        self.path = path
        self.store = store
        self.revocation = revocation
        self.keys = keys
        revocation.watch(keys)
    }

    /// A team keychain: rows in `store`, vouched for by `authority` (its signed log), opened
    /// with `keys` derived from the team's master key; `authority` has verified every row.
    /// - Parameter path: its name in messages and to the agent, `team:NAME`.
    /// - Parameter revocation: the one its opener registered its connection and member
    ///   keys with (`KeyRevocation`).
    package static func team(
        path: String, store: any ItemStore, keys: KeyHierarchy, authority: any HeaderAuthority,
        revocation: KeyRevocation = KeyRevocation()
    ) -> Keychain {
        let keychain = Keychain(path: path, store: store, keys: keys, revocation: revocation)
        keychain.authority = authority
        return keychain
    }

    /// Runs a team keychain's own operation (a membership change) with every key held and a
    /// way to adopt the new keys of a re-key. - Throws: errSecInteractionNotAllowed when locked.
    package func withTeamKeys<T>(_ body: (KeyHierarchy, (KeyHierarchy) -> Void) throws -> T) throws -> T {
        try body(try allKeys()) { self.keys = $0 }
    }

    /// Refuses an operation a team keychain does not support, with the authority's message.
    func requireFileKeychain(_ operation: String) throws {
        if let error = authority?.unsupported(operation) { throw error }
    }

    /// Creates a new keychain file (mode 0600 in a folder created 0700) protected by
    /// `password`.
    /// - Parameter profile: how hard the password is stretched (Argon2id).
    /// - Throws: errSecDuplicateKeychain when the file exists; errSecIO / errSecReadOnly
    ///   when it cannot be written.
    public static func create(at path: String, password: borrowing SecureBytes, profile: KDFProfile = .moderate) throws -> Keychain {
        try Sodium.ensureReady()
        let kdf = KDFParameters(profile: profile)
        let kek = try kdf.deriveKey(password: password)
        let store = try SQLiteItemStore(creating: path)
        do {
            return try create(in: store, path: path, kdf: kdf, kek: kek)
        } catch {
            FileSafety.removeKeychainFiles(path)
            throw error
        }
    }

    /// An empty keychain that lives only in this process's memory, under a random key no
    /// password derives: a dry run of an import into a keychain that does not exist yet
    /// runs on it, so it reports what the real run would, and no file is created.
    /// - Parameter path: the path the real keychain would have, for messages.
    public static func emptyInMemory(standingFor path: String) throws -> Keychain {
        try Sodium.ensureReady()
        let store = try SQLiteItemStore(inMemory: ())
        return try create(in: store, path: path, kdf: KDFParameters(profile: .interactive), kek: KeyHierarchy.newMasterKey())
    }

    /// Writes a new keychain's header into `store` (new and empty), its master key wrapped
    /// under `kek` (derived from the password with `kdf`).
    package static func create(in store: any ItemStore, path: String, kdf: KDFParameters, kek: SymmetricKey) throws -> Keychain {
        let master = try KeyHierarchy.newMasterKey()
        var record = KeychainRecord(
            formatVersion: formatVersion, keychainID: Sodium.randomBytes(16), keyGeneration: 1,
            kdfAlgorithm: kdf.algorithm, kdfOpslimit: kdf.opslimit, kdfMemlimit: kdf.memlimit,
            kdfSalt: kdf.salt, wrappedMasterKey: [])
        record.wrappedMasterKey = AEAD.seal(master.bytes, key: kek, ad: AssociatedData.masterKeyWrap(record))
        let keys = try KeyHierarchy(master: master, keychainID: record.keychainID, keyGeneration: 1, blindKeyIDs: Schema.blindKeyIDs)
        var state = StateRecord(
            minWriterVersion: writerVersion, generation: 0, itemCount: 0,
            accumulator: [UInt8](repeating: 0, count: 32),
            idleTimeout: defaultIdleTimeout, maxTimeout: defaultMaxTimeout, mac: [])
        state.mac = Header.mac(state, record: record, keys: keys)
        try store.transaction(write: true) {
            try store.writeKeychainRecord(record)
            try store.writeState(state)
        }
        let keychain = Keychain(path: path, store: store, keys: keys)
        keychain.openedRecord = record
        return keychain
    }

    /// Checks, without a password, that `path` can be a kc keychain: a regular file of this
    /// user's, private, in a safe folder, with a database header. A front end calls it before
    /// asking for a password, so a file that is not a keychain is named as such whether or
    /// not a password can be had (never "locked").
    /// - Throws: errSecNoSuchKeychain, errSecDecode (not a kc keychain), errSecParam
    ///   (another user's file, unsafe permissions, a symbolic link), errSecIO.
    public static func checkFile(at path: String) throws {
        try FileSafety.checkKeychainFile(at: path)
    }

    /// Opens a keychain with its password and checks its header and rows.
    /// - Throws: errSecNoSuchKeychain (no file), errSecAuthFailed (wrong password or a
    ///   tampered header: the two are indistinguishable by design), errSecDecode (not a kc
    ///   keychain, damaged, or rows deleted, inserted or replayed), errSecWrongSecVersion.
    /// - Parameter minimumGeneration: the highest header generation seen before for this
    ///   keychain (see `generation`); a file older than that is refused as a rollback.
    public static func open(at path: String, password: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws -> Keychain {
        try Sodium.ensureReady()
        return try open(SQLiteItemStore(openingExisting: path), path: path, password: password, minimumGeneration: minimumGeneration)
    }

    /// Opens this keychain's file again with `password`, through a connection of its own
    /// made without any descriptor outside SQLite (`ItemStore.freshConnection`): what a
    /// process that holds the file open already must use (the agent unlocking a keychain it
    /// keeps for its after-first-unlock items), for closing any other descriptor of the file
    /// drops every POSIX lock the process holds on it, SQLite's included.
    /// - Returns: nil when the file at `path` is no longer the one this keychain opened.
    package func reopened(password: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain? {
        guard let fresh = try store.freshConnection() else { return nil }
        return try Self.open(fresh, path: path, password: password, minimumGeneration: minimumGeneration)
    }

    /// Opens the keychain in `store` (named `path` in messages) as `open(at:…)` does.
    package static func open(
        _ store: any ItemStore, path: String, password: borrowing SecureBytes,
        minimumGeneration: UInt64 = 0
    ) throws -> Keychain {
        try Sodium.ensureReady()
        let record = try store.transaction(write: false) { try store.readKeychainRecord() }
        let (keys, kek) = try unwrap(record, password: password, path: path)
        let keychain = Keychain(path: path, store: store, keys: keys)
        keychain.highestGeneration = minimumGeneration
        keychain.openedRecord = record
        if record.formatVersion < formatVersion {
            try keychain.migrateFormat(from: record, kek: kek)
        }
        try keychain.verify()
        return keychain
    }

    /// Derives the KEK and unwraps the master key of `record`; answers the keys and the KEK
    /// (kept only to migrate an older format's wrap).
    static func unwrap(_ record: KeychainRecord, password: borrowing SecureBytes, path: String) throws -> (KeyHierarchy, SymmetricKey) {
        guard record.formatVersion <= formatVersion else {
            throw KeychainError(
                errSecWrongSecVersion, "\(path) has format version \(record.formatVersion); this kc reads up to \(formatVersion)",
                hint: "upgrade kc to open this keychain")
        }
        guard record.keychainID.count == 16 else {
            throw KeychainError(errSecDecode, "\(path) has a malformed keychain id")
        }
        let kdf = KDFParameters(
            algorithm: record.kdfAlgorithm, opslimit: record.kdfOpslimit,
            memlimit: record.kdfMemlimit, salt: record.kdfSalt)
        let kek = try kdf.deriveKey(password: password)
        let master: SecureBytes
        do {
            master = try AEAD.open(record.wrappedMasterKey, key: kek, ad: AssociatedData.masterKeyWrap(record), what: "the master key")
        } catch {
            throw KeychainError(errSecAuthFailed, "wrong password for \(path) (or its header was tampered with)")
        }
        guard master.count == 32 else { throw KeychainError(errSecDecode, "\(path) has a malformed master key") }
        let mk = try SecureBytes(count: 32, guarded: true)
        master.withUnsafeBytes { src in mk.withUnsafeMutableBytes { $0.copyMemory(from: src) } }
        let keys = try KeyHierarchy(
            master: SymmetricKey(mk), keychainID: record.keychainID,
            keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        return (keys, kek)
    }

    /// The highest header generation this object has seen: every write increments it, and
    /// a file whose generation is lower is refused as a rollback. Whoever keeps state
    /// outside the file (the agent) passes it back to `open(at:password:minimumGeneration:)`.
    public var generation: UInt64 { highestGeneration }

    /// The keychain's random 16-byte id (not secret).
    public func keychainID() throws -> [UInt8] {
        if authority != nil { return try unlockedKeys().keychainID }
        return try store.transaction(write: false) { try store.readKeychainRecord() }.keychainID
    }

    /// Called by the agent about once a second between requests while it holds the keychain
    /// unlocked: a team keychain records the head its view moved to since its last
    /// checkpoint (`HeaderAuthority.idle`); a file keychain does nothing.
    public func idle() {
        guard keys != nil else { return }
        authority?.idle()
    }

    /// Wipes the keys; every later call fails with errSecInteractionNotAllowed.
    public func lock() {
        authority?.didLock()
        keys = nil
        rowLedger.invalidate()
        verifiedStamp = nil
    }

    /// Locks the keychain as Apple's class keys do (`docs/security.md`, "A locked agent"):
    /// the master key and the when-unlocked class key are dropped (wiped once no running
    /// operation holds them); what reads after-first-unlock items stays, so reads of such
    /// items keep working and everything else fails with errSecInteractionNotAllowed.
    /// Writes need the keychain unlocked again. A keychain with no after-first-unlock item
    /// is locked entirely, as `lock()` does.
    /// - Returns: whether it kept anything.
    @discardableResult
    public func lockKeepingAfterFirstUnlock() -> Bool {
        // A team keychain is locked entirely: its view of the log is checked under every key.
        guard let keys, authority == nil, (try? hasAfterFirstUnlockItems()) == true else {
            lock()
            return false
        }
        self.keys = keys.afterFirstUnlockOnly()
        return true
    }

    /// Whether any row is protected by the after-first-unlock class key (read from the
    /// rows' `pclass` column: it only decides whether that key is worth keeping).
    func hasAfterFirstUnlockItems() throws -> Bool {
        var found = false
        try store.transaction(write: false) {
            try store.forEachRow(.all, includeData: false) { row in
                found = row.protection == .afterFirstUnlock
                return !found
            }
        }
        return found
    }

    /// Whether the keychain's keys are held: all of them, so it is unlocked.
    public var isUnlocked: Bool { keys?.isComplete == true }

    /// Whether any key is held: unlocked, or locked with after-first-unlock items readable.
    public var holdsKeys: Bool { keys != nil }

    /// Whether a failure of an operation on this keychain means only that it is locked
    /// while it keeps after-first-unlock items readable: the operation needed a key it
    /// dropped (a when-unlocked item, or a write).
    public func isLockedOut(_ error: KeychainError) -> Bool {
        keys != nil && !isUnlocked && error.status == errSecInteractionNotAllowed
    }

    /// The keys held (all, or after-first-unlock's only), or errSecInteractionNotAllowed
    /// once locked entirely.
    func unlockedKeys() throws -> KeyHierarchy {
        guard let keys, !revocation.isRevoked else {
            throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked", hint: "unlock it again")
        }
        return keys
    }

    /// Every key, or errSecInteractionNotAllowed when the keychain is locked (whether or
    /// not it keeps after-first-unlock items readable): writes, backups, password changes.
    func allKeys() throws -> KeyHierarchy {
        guard let keys, keys.isComplete, !revocation.isRevoked else {
            throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked", hint: "unlock it again")
        }
        return keys
    }

    /// The number of items in the keychain, from its authenticated header.
    public func itemCount() throws -> Int {
        try read { _, state in Int(state.itemCount) }
    }

    /// The stored auto-lock timeouts in seconds (idle, absolute).
    public func timeouts() throws -> (idle: UInt64, maximum: UInt64) {
        try read { _, state in (state.idleTimeout, state.maxTimeout) }
    }

    /// The KDF profile the keychain's password uses, if it is one of the named ones.
    public func kdfProfile() throws -> KDFProfile? {
        if authority != nil { return nil }
        let r = try store.transaction(write: false) { try store.readKeychainRecord() }
        return KDFParameters(algorithm: r.kdfAlgorithm, opslimit: r.kdfOpslimit, memlimit: r.kdfMemlimit, salt: r.kdfSalt).profile
    }
}
