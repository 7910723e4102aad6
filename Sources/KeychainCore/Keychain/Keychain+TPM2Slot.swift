#if canImport(Glibc)
import Glibc
#endif

/// A TPM2 slot as `kc keyslot list` and `kc unlock --tpm2-only` read it: its id and how it
/// is sealed, never a secret.
public struct TPM2SlotInfo: Equatable, Sendable {
    /// The slot's number.
    public let id: Int64
    /// How the TPM holds its secret.
    public let sealing: TPM2Sealing
}

extension Keychain {
    /// Adds a TPM2 slot: the master key wrapped under the key `SlotWrap` derives (kind
    /// `tpm2`) from `secret`, 32 random bytes the caller made in guarded memory and had the
    /// TPM seal as `sealing` (`kc-tpm seal`), in one write transaction (the generation moves
    /// and the header MAC covers the new record).
    /// - Returns: the slot's id.
    /// - Throws: errSecParam for a secret of another length or a keychain with the most
    ///   slots kc keeps.
    public func addTPM2Slot(secret: borrowing SecureBytes, sealing: TPM2Sealing) throws -> Int64 {
        try requireFileKeychain("adding a key slot")
        try Sodium.ensureReady()
        guard secret.count == 32 else { throw KeychainError(errSecParam, "a TPM2 slot's secret is 32 bytes") }
        let salt = Sodium.randomBytes(SlotWrap.saltBytes)
        let created = UInt64(max(0, time(nil)))
        // The slot key is derived here, from the id the slot will have: the write checks the
        // record has not moved since (the secret cannot be borrowed into its closure).
        let before = try read { _, _ in try store.readKeychainRecord() }
        let id = (before.slots.map(\.id).max() ?? KeySlotRow.passwordSlotID) + 1
        let key = try SlotWrap.key(secret: secret, kind: .tpm2, keychainID: before.keychainID, slotID: id, salt: salt)
        var written: KeychainRecord?
        try write(replacingRecord: { current in
            guard current.slots.count < Self.maxSlots else {
                throw KeychainError(errSecParam, "\(self.path) has \(current.slots.count + 1) key slots already, the most kc keeps")
            }
            guard current.keychainID == before.keychainID, (current.slots.map(\.id).max() ?? KeySlotRow.passwordSlotID) + 1 == id else {
                throw KeychainError(errSecParam, "\(self.path) changed its key slots while this one was added", hint: "add it again")
            }
            let keys = try self.allKeys()
            let ad = SlotWrap.associatedData(
                kind: .tpm2, keychainID: current.keychainID, keyGeneration: current.keyGeneration, slotID: id, created: created, salt: salt)
            let wrap = AEAD.seal(try keys.master().bytes, key: key, ad: ad)
            let fields = TPM2Slot(sealing: sealing, salt: salt, wrappedMasterKey: wrap).fields
            var record = current
            record.slots.append(KeySlotRow(id: id, kind: .tpm2, created: created, fields: fields))
            written = record
            return record
        }) { _, _ in }
        guard let written, let slot = written.slots.last else { throw KeychainError(errSecInternalError, "no slot was written") }
        openedRecord = written
        try store.compactLog()
        return slot.id
    }

    /// The TPM2 slots of the keychain file at `path`, read without opening it (the TPM must
    /// unseal a slot's secret before anything can be checked): what `open(at:tpm2Secret:)`
    /// then authenticates.
    /// - Throws: errSecAuthFailed for a file of an older format (it has no slot).
    public static func tpm2Slots(at path: String) throws -> [TPM2SlotInfo] {
        try Sodium.ensureReady()
        let store = try SQLiteItemStore(openingExisting: path)
        let record = try store.transaction(write: false) { try store.readKeychainRecord() }
        guard record.formatVersion == formatVersion else {
            throw KeychainError(
                record.formatVersion > formatVersion ? errSecWrongSecVersion : errSecAuthFailed,
                "\(path) has format version \(record.formatVersion), which has no TPM2 key slot")
        }
        return try record.slots.filter { $0.kind == .tpm2 }.map { TPM2SlotInfo(id: $0.id, sealing: try TPM2Slot(fields: $0.fields).sealing) }
    }

    /// Opens a keychain with the secret a TPM unsealed for one of its TPM2 slots, as
    /// `open(at:recoveryKey:)` opens it with a recovery key.
    /// - Throws: errSecAuthFailed when no TPM2 slot opens with it, and what
    ///   `open(at:password:)` throws for the file.
    public static func open(at path: String, tpm2Secret: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws -> Keychain {
        try Sodium.ensureReady()
        return try open(SQLiteItemStore(openingExisting: path), path: path, tpm2Secret: tpm2Secret, minimumGeneration: minimumGeneration)
    }

    /// `reopened(password:…)` with a TPM2 slot's secret.
    package func reopened(tpm2Secret: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain? {
        guard let fresh = try store.freshConnection() else { return nil }
        return try Self.open(fresh, path: path, tpm2Secret: tpm2Secret, minimumGeneration: minimumGeneration)
    }

    /// Opens the keychain in `store` with a TPM2 slot's secret: each TPM2 slot's wrap is tried
    /// with the key derived for it; the one that opens gives the master key, and the header
    /// MAC under it then authenticates the whole record (`verify`).
    package static func open(_ store: any ItemStore, path: String, tpm2Secret: borrowing SecureBytes, minimumGeneration: UInt64 = 0) throws -> Keychain {
        let record = try store.transaction(write: false) { try store.readKeychainRecord() }
        guard record.formatVersion == formatVersion else {
            throw KeychainError(
                record.formatVersion > formatVersion ? errSecWrongSecVersion : errSecAuthFailed,
                "\(path) has format version \(record.formatVersion), which has no TPM2 key slot",
                hint: record.formatVersion > formatVersion ? "upgrade kc to open this keychain" : "unlock it with its password")
        }
        let slots = record.slots.filter { $0.kind == .tpm2 }
        guard !slots.isEmpty else {
            throw KeychainError(errSecAuthFailed, "\(path) has no TPM2 key slot", hint: "unlock it with its password; `kc keyslot add --tpm2` makes one")
        }
        guard record.keychainID.count == 16, tpm2Secret.count == 32 else {
            throw KeychainError(errSecAuthFailed, "the TPM's secret does not open \(path)")
        }
        let mk = try SecureBytes(count: 32, guarded: true)
        var opened = false
        for slot in slots {
            let fields = try TPM2Slot(fields: slot.fields)
            let key = try SlotWrap.key(secret: tpm2Secret, kind: .tpm2, keychainID: record.keychainID, slotID: slot.id, salt: fields.salt)
            let ad = SlotWrap.associatedData(
                kind: .tpm2, keychainID: record.keychainID, keyGeneration: record.keyGeneration, slotID: slot.id, created: slot.created,
                salt: fields.salt)
            if let master = try? AEAD.open(fields.wrappedMasterKey, key: key, ad: ad, what: "the master key"), master.count == 32 {
                master.withUnsafeBytes { src in mk.withUnsafeMutableBytes { $0.copyMemory(from: src) } }
                opened = true
                break
            }
        }
        guard opened else {
            throw KeychainError(errSecAuthFailed, "the TPM's secret does not open \(path) (or its slot was tampered with)")
        }
        let keys = try KeyHierarchy(
            master: SymmetricKey(mk), keychainID: record.keychainID, keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        let keychain = Keychain(path: path, store: store, keys: keys)
        keychain.highestGeneration = minimumGeneration
        keychain.openedRecord = record
        try keychain.verify()
        return keychain
    }
}
