import KeychainCore

/// Keeps a keychain's TPM2 slots through a re-key (`kc passwd`, `kc keyslot remove`). For
/// each slot without a PIN, the TPM unseals its secret (proof that the slot still opens, on
/// this TPM: kc-tpm checks the storage primary's name), then seals a new secret with the
/// same PCRs, which is unsealed once to check; the new master key is wrapped for the new
/// secret, so whoever unsealed the old one before the re-key gets nothing written after.
/// A slot with a PIN (a re-key does not ask for it), or one the TPM does not open, is
/// removed, and `reasons` says why for `Passwd.rekeyed`.
///
///     let keeper = TPM2SlotKeeper()
///     let removed = try opened.rekey(newPassword: new, keeping: keeper.keep)
final class TPM2SlotKeeper {
    /// Why each TPM2 slot that was not kept was not, by slot id.
    private(set) var reasons: [Int64: String] = [:]
    /// The TPM2 slots sealed anew, to be kept if their old secret opens them.
    private(set) var resealed: [Int64] = []

    /// What keeps `slot`, when it is a TPM2 slot without a PIN the TPM opens and seals anew.
    func keep(_ slot: KeySlotInfo) -> SlotKeeping? {
        guard let sealing = slot.tpm2 else { return nil }
        guard !sealing.hasPIN else {
            reasons[slot.id] = "a re-key does not ask for its PIN"
            return nil
        }
        do {
            let current = try TPMProgram.unseal(sealing.sealedBlob, pin: nil)
            let fresh = try SecureBytes.random(count: 32)
            let pcrs = sealing.pcrs.isEmpty ? nil : sealing.pcrs.map(String.init).joined(separator: ",")
            let blob = try TPMProgram.seal(fresh, pin: nil, pcrs: pcrs)
            let newSealing = try TPM2Sealing(blob: blob)
            guard !newSealing.hasPIN, newSealing.pcrMask == sealing.pcrMask, try TPMProgram.unseal(blob, pin: nil).constantTimeEquals(fresh) else {
                reasons[slot.id] = "the TPM did not seal a new key for it as asked"
                return nil
            }
            resealed.append(slot.id)
            return SlotKeeping(current: current, resealed: fresh, sealing: newSealing)
        } catch let error as KeychainError {
            reasons[slot.id] = "the TPM did not open it again (\(error.message))"
        } catch {
            reasons[slot.id] = "the TPM did not open it again"
        }
        return nil
    }
}
