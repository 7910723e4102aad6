import KeychainClient
import KeychainCore

/// `kc unlock` through the keychain's TPM2 slots (`kc keyslot add --tpm2`): each slot's
/// blob goes to kc-tpm (`TPMProgram`), which gives back the 32-byte secret only on the TPM
/// that sealed it, and the secret goes to the agent, established as the real one, as a
/// recovery key does (`unlockWithSlot`). Slots without a PIN are tried first; once the TPM
/// refuses a PIN, no other slot is tried.
///
/// Without `only`, a keychain with no TPM2 slot, or whose TPM cannot give the secret (no
/// TPM, another TPM, changed PCRs, a wrong or missing PIN), is reported on stderr and left to
/// the password (`run` returns false). With `only` (`--tpm2-only`), nothing is ever
/// prompted for and any such failure is the command's.
struct TPM2Unlock {
    /// The keychain file.
    let path: String
    /// `--pin-file`.
    let pinFile: String?
    /// `--tpm2-only`.
    let only: Bool

    /// Unlocks the keychain in the agent with a TPM2 slot.
    /// - Returns: true when it did; false when the password should be asked instead.
    /// - Throws: with `only`, why no slot opened; always, what the agent answers to the
    ///   secret (an impostor: 22; a slot whose wrap does not open: 51).
    func run(idle: UInt64, maximum: UInt64) throws -> Bool {
        let slots: [TPM2SlotInfo]
        do {
            slots = try Keychain.tpm2Slots(at: path)
        } catch let error as KeychainError where !only && error.status == errSecAuthFailed {
            return false   // an older format: it has no slot
        }
        guard !slots.isEmpty else {
            if only {
                throw KeychainError(
                    errSecAuthFailed, "\(path) has no TPM2 key slot", hint: "`kc keyslot add --tpm2` makes one; until then unlock it with its password")
            }
            return false
        }
        var failure: KeychainError?
        for slot in slots.sorted(by: { !$0.sealing.hasPIN && $1.sealing.hasPIN }) {
            let secret: SecureBytes
            do {
                var pin: SecureBytes? = nil
                if slot.sealing.hasPIN {
                    pin = try TPMPINSource.forUnlock(file: pinFile, prompt: !only, path: path)
                    guard pin != nil else {
                        throw KeychainError(
                            errSecInteractionNotAllowed, "TPM2 slot \(slot.id) of \(path) needs its PIN and kc may not ask for it",
                            hint: only ? "give it with --pin-file PATH" : "run kc unlock on a terminal, or give --pin-file PATH")
                    }
                }
                secret = try TPMProgram.unseal(slot.sealing.sealedBlob, pin: pin)
            } catch let error as KeychainError {
                if !only { Report.note("TPM2 slot \(slot.id): \(error.message)") }
                failure = error
                // The slots are not authenticated before the TPM opens one: a PIN refused
                // (or a TPM in lockout) is tried on no other slot, so a file with slots
                // spliced in costs the TPM's lockout counter at most one try per unlock.
                if error.status == errSecAuthFailed { break }
                continue
            }
            do {
                try AgentClient().unlock(path: path, slot: .tpm2, secret: secret, idle: idle, maximum: maximum)
                return true
            } catch let error as KeychainError where !only && error.status != errSecCSReqFailed {
                // The agent refused what the TPM gave (an older copy put in place, a slot
                // tampered with): the password decides, as it would without a slot. An agent
                // that is not the real one (22) is never given the password either.
                Report.note("TPM2 slot \(slot.id): \(error.message)")
                Report.note("unlock \(path) with its password instead")
                return false
            }
        }
        if only, let failure { throw failure }
        Report.note("unlock \(path) with its password instead")
        return false
    }
}
