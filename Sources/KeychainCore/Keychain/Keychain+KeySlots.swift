#if canImport(Glibc)
import Glibc
#endif

/// One way into a keychain, as `kc keyslot list` shows it: never a secret.
public struct KeySlotInfo: Equatable, Sendable {
    /// The slot's number (the password slot is 1).
    public let id: Int64
    /// `password`, `recovery` or `tpm2`.
    public let kind: String
    /// When it was added (seconds since 1970); nil for the password slot, whose record
    /// keeps no date.
    public let created: UInt64?
    /// For a TPM2 slot, how the TPM holds its secret (PIN, PCRs); nil for other kinds.
    public var tpm2: TPM2Sealing? = nil
}

extension KeySlotInfo {
    /// What `kc keyslot list` shows of `row`.
    init(_ row: KeySlotRow) throws {
        self.init(id: row.id, kind: row.kind.rawValue, created: row.created, tpm2: row.kind == .tpm2 ? try TPM2Slot(fields: row.fields).sealing : nil)
    }
}

/// Where a re-key finds what keeps a slot (`Keychain.rekey`): given the slot, the secret
/// that opens it now and, for a TPM2 slot, a new secret the TPM sealed in its place; nil
/// removes the slot.
public typealias SlotSecretSource = (KeySlotInfo) throws -> SlotKeeping?

/// What keeps a slot through a re-key. `current` must open the slot as it is (the record is
/// authenticated, so this is the TPM, or the recovery key's holder, vouching for it). A TPM2
/// slot is sealed anew (`resealed`, `sealing`): a re-key after a suspected leak must not
/// leave a slot whose secret someone may have unsealed before it, opening everything
/// written after it.
public struct SlotKeeping: ~Copyable {
    /// The secret that opens the slot now.
    let current: SecureBytes
    /// The new secret the slot is wrapped for, when the slot is sealed anew.
    let resealed: SecureBytes?
    /// The new secret's sealing (the blob `kc-tpm seal` wrote for it).
    let sealing: TPM2Sealing?

    /// A slot kept with the secret it has (`current` opens it).
    public init(current: consuming SecureBytes) {
        self.current = current
        resealed = nil
        sealing = nil
    }

    /// A TPM2 slot that `current` opens, sealed anew: `resealed` under `sealing`.
    public init(current: consuming SecureBytes, resealed: consuming SecureBytes, sealing: TPM2Sealing) {
        self.current = current
        self.resealed = .some(resealed)
        self.sealing = sealing
    }

    /// `body` with the secret the slot's new wrap is made for.
    func withNewSecret<R>(_ body: (borrowing SecureBytes) throws -> R) rethrows -> R {
        switch resealed {
        case .some(let fresh): return try body(fresh)
        case .none: return try body(current)
        }
    }
}

/// A slot kept through a re-key: its row, the slot key its (new) secret gives under a fresh
/// salt, and for a TPM2 slot sealed anew its new sealing; the new master key is wrapped
/// under that key at the new key generation.
struct SlotRewrap {
    let slot: KeySlotRow
    let salt: [UInt8]
    let key: SymmetricKey
    var sealing: TPM2Sealing? = nil
}

extension Keychain {
    /// The keychain's key slots: the password slot first, then the others in id order,
    /// read from the authenticated record.
    public func keySlots() throws -> [KeySlotInfo] {
        try requireFileKeychain("key slots")
        let record = try read { _, _ in try store.readKeychainRecord() }
        return [KeySlotInfo(id: KeySlotRow.passwordSlotID, kind: "password", created: nil)] + (try record.slots.map(KeySlotInfo.init))
    }

    /// Adds a recovery slot: 32 random bytes (the recovery key, made in guarded memory
    /// and wiped when this returns, kept nowhere), the master key wrapped under the key
    /// `SlotWrap` derives from them. `publish` is given the key first (it prints it): only
    /// when it returns is the slot written, in one write transaction (the generation moves
    /// and the header MAC covers the new record), so a key that could not be shown is never
    /// a way in.
    /// - Returns: the slot's id.
    /// - Throws: what `publish` throws (nothing is written).
    public func addRecoverySlot(publish: (borrowing SecureBytes) throws -> Void) throws -> Int64 {
        try addSlot(.recovery) { secret in
            try publish(secret)
            return { salt, wrap in RecoverySlot(salt: salt, wrappedMasterKey: wrap).fields }
        }
    }

    /// Adds a slot of `kind`: 32 random bytes made in guarded memory (wiped when this
    /// returns) are handed to `prepare`, which shows or seals them and returns how the slot's
    /// fields are made from its salt and wrap; then the master key is wrapped under the key
    /// `SlotWrap` derives from them for the slot's id, in one write transaction (the
    /// generation moves and the header MAC covers the new record). Nothing is written when
    /// `prepare` throws.
    /// - Throws: what `prepare` throws; errSecParam for a keychain with the most slots kc keeps.
    func addSlot(_ kind: KeySlotKind, prepare: (borrowing SecureBytes) throws -> (_ salt: [UInt8], _ wrap: [UInt8]) -> [UInt8]) throws -> Int64 {
        try requireFileKeychain("adding a key slot")
        let secret = try SecureBytes.random(count: 32)
        let slots = try read { _, _ in try store.readKeychainRecord() }.slots.count
        guard slots < Self.maxSlots else {
            throw KeychainError(errSecParam, "\(self.path) has \(slots + 1) key slots already, the most kc keeps")
        }
        let fields = try prepare(secret)
        let salt = Sodium.randomBytes(SlotWrap.saltBytes)
        let created = UInt64(max(0, time(nil)))
        var written: KeychainRecord?
        try write(replacingRecord: { current in
            guard current.slots.count < Self.maxSlots else {
                throw KeychainError(errSecParam, "\(self.path) has \(current.slots.count + 1) key slots already, the most kc keeps")
            }
            let keys = try self.allKeys()
            let id = (current.slots.map(\.id).max() ?? KeySlotRow.passwordSlotID) + 1
            let key = try SlotWrap.key(secret: secret, kind: kind, keychainID: current.keychainID, slotID: id, salt: salt)
            let ad = SlotWrap.associatedData(
                kind: kind, keychainID: current.keychainID, keyGeneration: current.keyGeneration, slotID: id, created: created, salt: salt)
            let wrap = AEAD.seal(try keys.master().bytes, key: key, ad: ad)
            var record = current
            record.slots.append(KeySlotRow(id: id, kind: kind, created: created, fields: fields(salt, wrap)))
            written = record
            return record
        }) { _, _ in }
        guard let written, let slot = written.slots.last else { throw KeychainError(errSecInternalError, "no slot was written") }
        openedRecord = written
        try store.compactLog()
        return slot.id
    }

    /// Removes key slot `id` and revokes it: the master key is replaced (`rekey`, under
    /// `password`, the one this keychain was just opened with), so the removed slot's wrap
    /// in a copy of the file made before opens only that copy's old master key, which
    /// opens nothing written since. Every other slot is kept when `keeping` gives the secret
    /// that opens it (a TPM2 slot the TPM unseals again), and removed otherwise (a recovery
    /// key is kept nowhere), and answered. The password slot (1) is never removed: it is the
    /// way every command that asks for a password opens the keychain.
    /// - Returns: every slot removed, `id` first.
    /// - Throws: errSecParam for the password slot; errSecItemNotFound for no such slot.
    public func removeKeySlot(_ id: Int64, password: borrowing SecureBytes, keeping: SlotSecretSource = { _ in nil }) throws -> [KeySlotInfo] {
        try requireFileKeychain("removing a key slot")
        guard id != KeySlotRow.passwordSlotID else {
            throw KeychainError(
                errSecParam, "slot 1 is the password slot of \(path): it is never removed (it is the way in every other command uses)",
                hint: "change the password with `kc passwd`")
        }
        guard try authenticatedRecord().slots.contains(where: { $0.id == id }) else {
            throw KeychainError(errSecItemNotFound, "\(path) has no key slot \(id)", hint: "see `kc keyslot list`")
        }
        let rewraps = try rewraps(of: try authenticatedRecord(), except: [id], keeping: keeping)
        let removed = try rekey(newPassword: password, profile: nil, rewrapping: rewraps)
        return removed.filter { $0.id == id } + removed.filter { $0.id != id }
    }

    /// `rekey(newPassword:profile:keeping:)` on a keychain opened with `recoveryKey`
    /// (`kc passwd --recovery`): the recovery slot it opened is wrapped again for the new
    /// master key, so the key just typed keeps working; every other slot is kept as
    /// `keeping` allows.
    /// - Returns: the slots removed.
    /// - Throws: errSecAuthFailed when no recovery slot of the opened record opens with it.
    public func rekey(
        newPassword: borrowing SecureBytes, profile: KDFProfile? = nil, keepingRecoveryKey recoveryKey: borrowing SecureBytes,
        keeping: SlotSecretSource = { _ in nil }
    ) throws -> [KeySlotInfo] {
        let before = try authenticatedRecord()
        var opened: KeySlotRow?
        for slot in before.slots where slot.kind == .recovery {
            if try Self.openSlot(slot, of: before, secret: recoveryKey) != nil {
                opened = slot
                break
            }
        }
        guard let opened else { throw KeychainError(errSecAuthFailed, "wrong recovery key for \(path)") }
        let salt = Sodium.randomBytes(SlotWrap.saltBytes)
        let key = try SlotWrap.key(secret: recoveryKey, kind: .recovery, keychainID: before.keychainID, slotID: opened.id, salt: salt)
        let others = try rewraps(of: before, except: [opened.id], keeping: keeping)
        return try rekey(newPassword: newPassword, profile: profile, rewrapping: [SlotRewrap(slot: opened, salt: salt, key: key)] + others)
    }

    /// The slots of `record` (but those in `except`) that a re-key keeps: each whose secret
    /// `keeping` gives and opens it, with the slot key that secret gives under a fresh salt.
    /// A secret that does not open its slot keeps nothing (the slot is removed).
    func rewraps(of record: KeychainRecord, except: Set<Int64>, keeping: SlotSecretSource) throws -> [SlotRewrap] {
        var out: [SlotRewrap] = []
        for slot in record.slots where !except.contains(slot.id) {
            guard let keep = try keeping(try KeySlotInfo(slot)) else { continue }
            guard try Self.openSlot(slot, of: record, secret: keep.current) != nil else { continue }
            guard slot.kind != .tpm2 || keep.sealing != nil else { continue }   // a TPM2 slot is always sealed anew
            let salt = Sodium.randomBytes(SlotWrap.saltBytes)
            let key = try keep.withNewSecret { try SlotWrap.key(secret: $0, kind: slot.kind, keychainID: record.keychainID, slotID: slot.id, salt: salt) }
            out.append(SlotRewrap(slot: slot, salt: salt, key: key, sealing: keep.sealing))
        }
        return out
    }

    /// The most slots beyond the password slot a keychain keeps.
    static let maxSlots = 32

    /// Opens a keychain with the secret of one of its slots of `kind`: a recovery key
    /// (`addRecoverySlot`), or the 32 bytes a TPM unsealed (`addTPM2Slot`), as
    /// `open(at:password:)` opens it with its password.
    /// - Throws: errSecAuthFailed when no slot of that kind opens with it (a wrong secret,
    ///   or none the file holds), and what `open(at:password:)` throws for the file.
    public static func open(at path: String, slot kind: KeySlotKind, secret: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws
        -> Keychain
    {
        try Sodium.ensureReady()
        return try open(SQLiteItemStore(openingExisting: path), path: path, slot: kind, secret: secret, minimumGeneration: minimumGeneration)
    }

    /// `reopened(password:…)` with a slot's secret.
    package func reopened(slot kind: KeySlotKind, secret: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain? {
        guard let fresh = try store.freshConnection() else { return nil }
        return try Self.open(fresh, path: path, slot: kind, secret: secret, minimumGeneration: minimumGeneration)
    }

    /// Opens the keychain in `store` with a slot's secret: each slot of `kind` has its wrap
    /// tried with the key derived for it; the one that opens gives the master key, and the
    /// header MAC under it then authenticates the whole record (`verify`). A file of an
    /// older format has no slot and is not migrated here: its password opens it.
    package static func open(_ store: any ItemStore, path: String, slot kind: KeySlotKind, secret: borrowing SecureBytes, minimumGeneration: UInt64 = 0)
        throws -> Keychain
    {
        let record = try store.transaction(write: false) { try store.readKeychainRecord() }
        guard record.formatVersion == formatVersion else {
            throw KeychainError(
                record.formatVersion > formatVersion ? errSecWrongSecVersion : errSecAuthFailed,
                "\(path) has format version \(record.formatVersion), which has no \(kind.name) slot",
                hint: record.formatVersion > formatVersion ? "upgrade kc to open this keychain" : "unlock it with its password")
        }
        let slots = record.slots.filter { $0.kind == kind }
        guard !slots.isEmpty else {
            throw KeychainError(
                errSecAuthFailed, "\(path) has no \(kind.name) slot", hint: "unlock it with its password; `kc keyslot add --\(kind.rawValue)` makes one")
        }
        guard record.keychainID.count == 16, secret.count == 32 else { throw kind.wrongSecret(path) }
        let mk = try SecureBytes(count: 32, guarded: true)
        var opened = false
        for slot in slots {
            if let master = try openSlot(slot, of: record, secret: secret) {
                master.withUnsafeBytes { src in mk.withUnsafeMutableBytes { $0.copyMemory(from: src) } }
                opened = true
                break
            }
        }
        guard opened else { throw kind.wrongSecret(path) }
        let keys = try KeyHierarchy(
            master: SymmetricKey(mk), keychainID: record.keychainID, keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        let keychain = Keychain(path: path, store: store, keys: keys)
        keychain.highestGeneration = minimumGeneration
        keychain.openedRecord = record
        try keychain.verify()
        return keychain
    }

    /// The master key `slot`'s wrap gives under the key derived from `secret` for it, or nil
    /// when it does not open.
    private static func openSlot(_ slot: KeySlotRow, of record: KeychainRecord, secret: borrowing SecureBytes) throws -> SecureBytes? {
        let (salt, wrap): ([UInt8], [UInt8])
        switch slot.kind {
        case .recovery:
            let fields = try RecoverySlot(fields: slot.fields)
            (salt, wrap) = (fields.salt, fields.wrappedMasterKey)
        case .tpm2:
            let fields = try TPM2Slot(fields: slot.fields)
            (salt, wrap) = (fields.salt, fields.wrappedMasterKey)
        }
        let key = try SlotWrap.key(secret: secret, kind: slot.kind, keychainID: record.keychainID, slotID: slot.id, salt: salt)
        let ad = SlotWrap.associatedData(
            kind: slot.kind, keychainID: record.keychainID, keyGeneration: record.keyGeneration, slotID: slot.id, created: slot.created, salt: salt)
        guard let mk = try? AEAD.open(wrap, key: key, ad: ad, what: "the master key"), mk.count == 32 else { return nil }
        return mk
    }
}
