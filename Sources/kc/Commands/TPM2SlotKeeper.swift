import KeychainCore

/// Keeps a keychain's TPM2 slots through a re-key (`kc passwd`, `kc keyslot remove`): each
/// slot without a PIN is unsealed again by the TPM (`TPMProgram`), so the new master key can
/// be wrapped for it; a slot with a PIN (whose PIN a re-key does not ask for), or one the
/// TPM does not give back, is removed, and `reasons` says why for `Passwd.rekeyed`.
///
///     let keeper = TPM2SlotKeeper()
///     let removed = try opened.rekey(newPassword: new, keeping: keeper.secret)
final class TPM2SlotKeeper {
    /// Why each TPM2 slot that was not kept was not, by slot id.
    private(set) var reasons: [Int64: String] = [:]
    /// The TPM2 slots kept, in the order they were unsealed.
    private(set) var kept: [Int64] = []

    /// The secret that opens `slot`, when it is a TPM2 slot the TPM unseals without a PIN.
    func secret(_ slot: KeySlotInfo) -> SecureBytes? {
        guard let sealing = slot.tpm2 else { return nil }
        guard !sealing.hasPIN else {
            reasons[slot.id] = "a re-key does not ask for its PIN"
            return nil
        }
        do {
            let secret = try TPMProgram.unseal(sealing.sealedBlob, pin: nil)
            kept.append(slot.id)
            return secret
        } catch let error as KeychainError {
            reasons[slot.id] = "the TPM did not give its key again (\(error.message))"
        } catch {
            reasons[slot.id] = "the TPM did not give its key again"
        }
        return nil
    }
}
