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
    /// Adds a TPM2 slot: 32 random bytes made here in guarded memory are handed to `seal`,
    /// which has the TPM seal them (`kc-tpm seal`) and returns how (the blob); the master
    /// key is then wrapped under the key `SlotWrap` derives (kind `tpm2`) from them, in one
    /// write transaction (the generation moves and the header MAC covers the new record).
    /// Nothing is written when `seal` throws.
    /// - Returns: the slot's id.
    /// - Throws: what `seal` throws; errSecParam for a keychain with the most slots kc keeps.
    public func addTPM2Slot(seal: (borrowing SecureBytes) throws -> TPM2Sealing) throws -> Int64 {
        try addSlot(.tpm2) { secret in
            let sealing = try seal(secret)
            return { salt, wrap in TPM2Slot(sealing: sealing, salt: salt, wrappedMasterKey: wrap).fields }
        }
    }

    /// The TPM2 slots of the keychain file at `path`, read without opening it (the TPM must
    /// unseal a slot's secret before anything can be checked): what `open(at:slot:secret:)`
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
        // Nothing here is authenticated yet: a file with more rows than kc ever writes is
        // not one whose slots are worth taking to the TPM.
        guard record.slots.count <= maxSlots else {
            throw KeychainError(errSecDecode, "\(path) has \(record.slots.count) key slots, more than kc keeps: the file was tampered with")
        }
        return try record.slots.filter { $0.kind == .tpm2 }.map { TPM2SlotInfo(id: $0.id, sealing: try TPM2Slot(fields: $0.fields).sealing) }
    }
}
