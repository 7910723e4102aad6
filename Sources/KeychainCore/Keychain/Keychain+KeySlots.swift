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
}

/// A recovery slot just added: its id and the recovery key's 32 bytes, shown once.
public struct AddedRecoverySlot: ~Copyable {
    /// The slot's number.
    public let id: Int64
    /// The recovery key (`RecoveryKeyText.format` makes it readable).
    public let key: SecureBytes
}

extension Keychain {
    /// The keychain's key slots: the password slot first, then the others in id order,
    /// read from the authenticated record.
    public func keySlots() throws -> [KeySlotInfo] {
        try requireFileKeychain("key slots")
        let record = try read { _, _ in try store.readKeychainRecord() }
        return [KeySlotInfo(id: KeySlotRow.passwordSlotID, kind: "password", created: nil)]
            + record.slots.map { KeySlotInfo(id: $0.id, kind: $0.kind.rawValue, created: $0.created) }
    }

    /// Adds a recovery slot: 32 random bytes (the recovery key, answered once and kept
    /// nowhere), the master key wrapped under the key `SlotWrap` derives from them. One
    /// write transaction: the generation moves and the header MAC covers the new record.
    /// - Returns: the slot's id and the recovery key's 32 bytes.
    public func addRecoverySlot() throws -> AddedRecoverySlot {
        try requireFileKeychain("adding a key slot")
        let secret = try SecureBytes(count: 32, guarded: true)
        secret.withUnsafeMutableBytes { $0.copyBytes(from: Sodium.randomBytes(32)) }
        let salt = Sodium.randomBytes(SlotWrap.saltBytes)
        let created = UInt64(max(0, time(nil)))
        var written: KeychainRecord?
        try write(replacingRecord: { current in
            guard current.slots.count < Self.maxSlots else {
                throw KeychainError(errSecParam, "\(self.path) has \(current.slots.count + 1) key slots already, the most kc keeps")
            }
            let keys = try self.allKeys()
            let id = (current.slots.map(\.id).max() ?? KeySlotRow.passwordSlotID) + 1
            let key = try SlotWrap.key(secret: secret, kind: .recovery, keychainID: current.keychainID, slotID: id, salt: salt)
            let ad = SlotWrap.associatedData(
                kind: .recovery, keychainID: current.keychainID, keyGeneration: current.keyGeneration, slotID: id, created: created, salt: salt)
            let wrap = AEAD.seal(try keys.master().bytes, key: key, ad: ad)
            var record = current
            record.slots.append(KeySlotRow(id: id, kind: .recovery, created: created, fields: RecoverySlot(salt: salt, wrappedMasterKey: wrap).fields))
            written = record
            return record
        }) { _, _ in }
        guard let written, let slot = written.slots.last else { throw KeychainError(errSecInternalError, "no slot was written") }
        openedRecord = written
        try store.compactLog()
        return AddedRecoverySlot(id: slot.id, key: try secret.copy(prefix: secret.count))
    }

    /// Removes key slot `id` in one write transaction (the generation moves, the MAC covers
    /// the record without it). The password slot (1) is never removed: it is the way every
    /// command that asks for a password opens the keychain, and it keeps a way in whatever
    /// else is removed. A copy of the file made before still opens with the removed slot.
    /// - Throws: errSecParam for the password slot; errSecItemNotFound for no such slot.
    public func removeKeySlot(_ id: Int64) throws {
        try requireFileKeychain("removing a key slot")
        guard id != KeySlotRow.passwordSlotID else {
            throw KeychainError(
                errSecParam, "slot 1 is the password slot of \(path): it is never removed (it is the way in every other command uses)",
                hint: "change the password with `kc passwd`")
        }
        var written: KeychainRecord?
        try write(replacingRecord: { current in
            guard current.slots.contains(where: { $0.id == id }) else {
                throw KeychainError(errSecItemNotFound, "\(self.path) has no key slot \(id)", hint: "see `kc keyslot list`")
            }
            var record = current
            record.slots.removeAll { $0.id == id }
            written = record
            return record
        }) { _, _ in }
        if let written { openedRecord = written }
        // The removed wrap must not linger in the -wal file.
        try store.compactLog()
    }

    /// The most slots beyond the password slot a keychain keeps.
    static let maxSlots = 32

    /// Opens a keychain with a recovery key (`addRecoverySlot`), as `open(at:password:)`
    /// opens it with its password.
    /// - Throws: errSecAuthFailed when no recovery slot opens with it (a wrong key, or none
    ///   the file holds), and what `open(at:password:)` throws for the file.
    public static func open(at path: String, recoveryKey: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws -> Keychain {
        try Sodium.ensureReady()
        return try open(SQLiteItemStore(openingExisting: path), path: path, recoveryKey: recoveryKey, minimumGeneration: minimumGeneration)
    }

    /// `reopened(password:…)` with a recovery key.
    package func reopened(recoveryKey: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain? {
        guard let fresh = try store.freshConnection() else { return nil }
        return try Self.open(fresh, path: path, recoveryKey: recoveryKey, minimumGeneration: minimumGeneration)
    }

    /// Opens the keychain in `store` with a recovery key: each recovery slot's wrap is tried
    /// with the key derived for it; the one that opens gives the master key, and the header
    /// MAC under it then authenticates the whole record (`verify`). A file of an older
    /// format has no slot and is not migrated here: its password opens it.
    package static func open(_ store: any ItemStore, path: String, recoveryKey: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws -> Keychain {
        let record = try store.transaction(write: false) { try store.readKeychainRecord() }
        guard record.formatVersion == formatVersion else {
            throw KeychainError(
                record.formatVersion > formatVersion ? errSecWrongSecVersion : errSecAuthFailed,
                "\(path) has format version \(record.formatVersion), which has no recovery key slot",
                hint: record.formatVersion > formatVersion ? "upgrade kc to open this keychain" : "unlock it with its password")
        }
        guard record.keychainID.count == 16, recoveryKey.count == 32 else {
            throw KeychainError(errSecAuthFailed, "wrong recovery key for \(path)")
        }
        let recoverySlots = record.slots.filter { $0.kind == .recovery }
        guard !recoverySlots.isEmpty else {
            throw KeychainError(
                errSecAuthFailed, "\(path) has no recovery key slot", hint: "unlock it with its password; `kc keyslot add --recovery` makes one")
        }
        let master = try openRecoverySlots(recoverySlots, of: record, recoveryKey: recoveryKey, path: path)
        let mk = try SecureBytes(count: 32, guarded: true)
        master.withUnsafeBytes { src in mk.withUnsafeMutableBytes { $0.copyMemory(from: src) } }
        let keys = try KeyHierarchy(
            master: SymmetricKey(mk), keychainID: record.keychainID, keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        let keychain = Keychain(path: path, store: store, keys: keys)
        keychain.highestGeneration = minimumGeneration
        keychain.openedRecord = record
        try keychain.verify()
        return keychain
    }

    /// The master key from the first of `slots` whose wrap opens under the key derived from
    /// `recoveryKey` for it. - Throws: errSecAuthFailed when none does.
    private static func openRecoverySlots(_ slots: [KeySlotRow], of record: KeychainRecord, recoveryKey: borrowing SecureBytes, path: String) throws
        -> SecureBytes
    {
        for slot in slots {
            let fields = try RecoverySlot(fields: slot.fields)
            let key = try SlotWrap.key(secret: recoveryKey, kind: .recovery, keychainID: record.keychainID, slotID: slot.id, salt: fields.salt)
            let ad = SlotWrap.associatedData(
                kind: .recovery, keychainID: record.keychainID, keyGeneration: record.keyGeneration, slotID: slot.id, created: slot.created,
                salt: fields.salt)
            do {
                let mk = try AEAD.open(fields.wrappedMasterKey, key: key, ad: ad, what: "the master key")
                if mk.count == 32 { return mk }
            } catch {
                continue
            }
        }
        throw KeychainError(errSecAuthFailed, "wrong recovery key for \(path) (or its slot was tampered with)")
    }
}
