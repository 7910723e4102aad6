/// A key slot beyond the password slot (format 6): one row of `kc_keyslots`
/// (`docs/format.md` §2.1, §2.2). Its kind, id, creation time and fields are all inside
/// the password record the header MAC covers (`KeySlot.stored`), so a row added by
/// writing the table, spliced in from an older copy, or edited fails the MAC.
package struct KeySlotRow: Equatable, Sendable {
    /// The slot's number, as `kc keyslot list` shows it: the password slot is 1, the
    /// others 2 and up (`kc_keyslots.id`).
    package var id: Int64
    /// What opens it.
    package var kind: KeySlotKind
    /// When it was added (seconds since 1970).
    package var created: UInt64
    /// The kind's fields in their layout (`RecoverySlot`, `docs/format.md` §2.2).
    package var fields: [UInt8]

    /// A row of these values.
    package init(id: Int64, kind: KeySlotKind, created: UInt64, fields: [UInt8]) {
        self.id = id
        self.kind = kind
        self.created = created
        self.fields = fields
    }

    /// The id of the password slot, which lives in `kc_keychain` itself.
    package static let passwordSlotID: Int64 = 1
}

/// The kinds of key slot format 6 defines beside the password slot. A kc refuses a file
/// whose `kc_keyslots` holds a kind it does not know (errSecDecode): it cannot check what
/// it does not know (`docs/format.md` §2.1).
public enum KeySlotKind: String, Sendable, CaseIterable {
    /// 256 random bits shown once (`RecoverySlot`).
    case recovery
    /// The master key wrapped under a secret sealed in a TPM (`TPM2Slot`).
    case tpm2

    /// The kind's domain-separation label in the header MAC and in its wrap's associated data.
    var label: String { "kc/v6/slot/" + rawValue }

    /// The kind's name in messages: "recovery key" or "TPM2 key".
    var name: String {
        switch self {
        case .recovery: "recovery key"
        case .tpm2: "TPM2 key"
        }
    }

    /// The failure of a secret that opens no slot of this kind in the keychain at `path`.
    func wrongSecret(_ path: String) -> KeychainError {
        switch self {
        case .recovery: KeychainError(errSecAuthFailed, "wrong recovery key for \(path) (or its slot was tampered with)")
        case .tpm2: KeychainError(errSecAuthFailed, "the TPM's secret does not open \(path) (or its slot was tampered with)")
        }
    }
}
