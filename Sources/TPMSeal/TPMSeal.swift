import CSodium
import CTSS2
import KeychainStatus

/// Sealing a 32-byte secret to this machine's TPM and getting it back (docs/tpm.md).
///
/// The secret becomes a keyedhash sealed data object under a storage primary the TPM
/// derives afresh on each call from its owner seed (the TCG's ECC P-256 SRK template), so a
/// copy of the blob is of no use with another TPM, or after the owner hierarchy is cleared.
/// A PIN is the object's authValue (SHA-256 of the PIN), so wrong ones count towards the
/// TPM's dictionary-attack lockout; PCRs make the object's policy PolicyPCR over the SHA-256
/// bank, then PolicyAuthValue when there is a PIN. Every command that carries the secret or
/// the PIN runs in a session salted by the primary with AES-128-CFB parameter encryption, so
/// neither crosses the TPM's bus in the clear.
public enum TPMSeal {
    /// The size of the secret kc seals: a 256-bit key.
    public static let secretSize = 32

    /// Seals `secret` (32 bytes) to the TPM at `tcti` (a tpm2-tss TCTI configuration; nil
    /// for the default device), with an optional PIN and the SHA-256 PCRs of `pcrMask`.
    /// - Throws: errSecNotAvailable when no TPM answers; errSecParam for a wrong size or
    ///   an empty PIN.
    public static func seal(_ secret: [UInt8], pin: [UInt8]?, pcrMask: UInt32, tcti: String?) throws(KeychainError) -> SealedBlob {
        guard secret.count == secretSize else { throw KeychainError(errSecParam, "kc-tpm seals exactly \(secretSize) bytes, not \(secret.count)") }
        guard pcrMask < 1 << 24 else { throw KeychainError(errSecParam, "PCRs are numbered 0 to 23") }
        var auth = try authValue(pin)
        defer { wipe(&auth) }
        let tpm = try TPMConnection(tcti: tcti)
        let primary = try tpm.storagePrimary()
        var selection = TPML_PCR_SELECTION()
        kc_tpm_pcr_selection(&selection, pcrMask)
        var policy: [UInt8] = []
        if pcrMask != 0 {
            let trial = try tpm.session(kc_tpm_se_trial, saltedBy: nil)
            policy = try policyDigest(tpm, trial, selection: &selection, pin: pin != nil)
            tpm.flush(trial)
        }
        var template = TPM2B_PUBLIC()
        guard kc_tpm_sealed_template(&template, pcrMask == 0 ? 1 : 0, pin == nil ? 1 : 0, policy, policy.count) == 0 else {
            throw KeychainError(errSecInternalError, "the policy digest does not fit the template")
        }
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { withUnsafeMutableBytes(of: &sensitive) { sodium_memzero($0.baseAddress, $0.count) } }
        guard kc_tpm_sensitive(&sensitive, secret, secret.count, auth, auth.count) == 0 else {
            throw KeychainError(errSecInternalError, "the secret does not fit the TPM's sealed object")
        }
        let session = try tpm.session(kc_tpm_se_hmac, saltedBy: primary.handle)
        try tpm.setAttributes(session, kc_tpm_session_crypt)
        var outside = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        if let failure = tpm.call({
            Esys_Create(
                $0, primary.handle, session, kc_tpm_tr_none, kc_tpm_tr_none, &sensitive, &template, &outside, &creationPCR,
                &outPrivate, &outPublic, &creationData, &creationHash, &ticket)
        }) {
            throw failure.error("sealing the secret")
        }
        defer {
            Esys_Free(outPrivate)
            Esys_Free(outPublic)
            Esys_Free(creationData)
            Esys_Free(creationHash)
            Esys_Free(ticket)
        }
        guard let outPrivate, let outPublic else { throw KeychainError(errSecInternalError, "the TPM returned no sealed object") }
        let blob = SealedBlob(
            hasPIN: pin != nil, pcrMask: pcrMask, primaryName: primary.name, policyDigest: policy,
            publicArea: SealedBlob.marshal(outPublic.pointee), privateArea: SealedBlob.marshal(outPrivate.pointee))
        guard !blob.publicArea.isEmpty, !blob.privateArea.isEmpty else {
            throw KeychainError(errSecInternalError, "the sealed object could not be marshalled")
        }
        return blob
    }

    /// The secret `blob` holds, from the TPM at `tcti`; `pin` must be given when the blob
    /// has one.
    /// - Throws: errSecNotAvailable (no TPM), errSecDecode (another TPM's blob, or a
    ///   damaged one), errSecAuthFailed (a wrong PIN, or the TPM in lockout: the message
    ///   says which), errSecCSReqFailed (the PCRs are no longer what they were),
    ///   errSecInteractionNotAllowed (a PIN blob and no PIN).
    public static func unseal(_ blob: SealedBlob, pin: [UInt8]?, tcti: String?) throws(KeychainError) -> [UInt8] {
        guard !blob.hasPIN || pin != nil else {
            throw KeychainError(errSecInteractionNotAllowed, "this sealed key needs its PIN", hint: "give it with --pin-fd N or on a terminal")
        }
        var auth = try authValue(blob.hasPIN ? pin : nil)
        defer { wipe(&auth) }
        guard var inPublic = SealedBlob.unmarshalsPublic(blob.publicArea), var inPrivate = SealedBlob.unmarshalsPrivate(blob.privateArea) else {
            throw KeychainError(errSecDecode, "the sealed key is damaged")
        }
        let tpm = try TPMConnection(tcti: tcti)
        let primary = try tpm.storagePrimary()
        guard primary.name == blob.primaryName else {
            throw KeychainError(
                errSecDecode, "the key was sealed by another TPM (or this TPM's owner hierarchy was cleared since)",
                hint: "a sealed key opens only on the TPM that sealed it")
        }
        var object: ESYS_TR = kc_tpm_tr_none
        if let failure = tpm.call({ Esys_Load($0, primary.handle, kc_tpm_tr_password, kc_tpm_tr_none, kc_tpm_tr_none, &inPrivate, &inPublic, &object) }) {
            if failure.lostTheTPM { throw failure.error("loading the sealed key") }
            throw KeychainError(
                errSecDecode, "the TPM does not accept the sealed key: it is damaged, or from another TPM (\(failure.text))")
        }
        tpm.keep(object)
        var authValue = TPM2B_AUTH()
        defer { withUnsafeMutableBytes(of: &authValue) { sodium_memzero($0.baseAddress, $0.count) } }
        _ = kc_tpm_auth(&authValue, auth, auth.count)
        if let failure = tpm.call({ Esys_TR_SetAuth($0, object, &authValue) }) { throw failure.error("setting the PIN") }
        let session: ESYS_TR
        if blob.pcrMask != 0 {
            session = try tpm.session(kc_tpm_se_policy, saltedBy: primary.handle)
            var selection = TPML_PCR_SELECTION()
            kc_tpm_pcr_selection(&selection, blob.pcrMask)
            _ = try policyDigest(tpm, session, selection: &selection, pin: blob.hasPIN)
        } else {
            session = try tpm.session(kc_tpm_se_hmac, saltedBy: primary.handle)
        }
        try tpm.setAttributes(session, kc_tpm_session_response)
        var out: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        if let failure = tpm.call({ Esys_Unseal($0, object, session, kc_tpm_tr_none, kc_tpm_tr_none, &out) }) {
            throw unsealError(failure, tpm)
        }
        guard let out else { throw KeychainError(errSecInternalError, "the TPM returned nothing") }
        defer {
            withUnsafeMutableBytes(of: &out.pointee) { sodium_memzero($0.baseAddress, $0.count) }
            Esys_Free(out)
        }
        let count = Int(out.pointee.size)
        guard count == secretSize else { throw KeychainError(errSecDecode, "the sealed key holds \(count) bytes, not \(secretSize)") }
        return withUnsafeBytes(of: out.pointee.buffer) { Array($0.prefix(count)) }
    }

    /// PolicyPCR over `selection` (the PCRs' current values), then PolicyAuthValue with a
    /// PIN, in `session`; returns the session's digest.
    static func policyDigest(_ tpm: TPMConnection, _ session: ESYS_TR, selection: inout TPML_PCR_SELECTION, pin: Bool) throws(KeychainError) -> [UInt8] {
        var empty = TPM2B_DIGEST()
        if let failure = tpm.call({ Esys_PolicyPCR($0, session, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, &empty, &selection) }) {
            throw failure.error("reading the PCRs")
        }
        if pin, let failure = tpm.call({ Esys_PolicyAuthValue($0, session, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none) }) {
            throw failure.error("adding the PIN to the policy")
        }
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        if let failure = tpm.call({ Esys_PolicyGetDigest($0, session, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, &digest) }) {
            throw failure.error("computing the policy")
        }
        defer { Esys_Free(digest) }
        guard let digest else { throw KeychainError(errSecInternalError, "the TPM returned no policy digest") }
        return withUnsafeBytes(of: digest.pointee.buffer) { Array($0.prefix(Int(digest.pointee.size))) }
    }

    /// What a refused TPM2_Unseal means for the user.
    static func unsealError(_ failure: TPMResponse, _ tpm: TPMConnection) -> KeychainError {
        guard failure.fromTPM else { return failure.error("unsealing") }
        switch failure.code {
        case TPMResponse.authFail, TPMResponse.badAuth:
            let state = tpm.lockoutState().map { " (the TPM has counted \($0.counter) of the \($0.max) wrong tries it allows)" } ?? ""
            return KeychainError(errSecAuthFailed, "wrong PIN for the TPM\(state)")
        case TPMResponse.lockout:
            // The TPM forgets one failure per interval of powered-on time: the next try
            // comes back within one interval.
            let wait = tpm.lockoutState().map { ": it allows another try within \($0.interval) s (of powered-on time)" } ?? ""
            return KeychainError(
                errSecAuthFailed, "the TPM is locked out after too many wrong PINs\(wait)",
                hint: "wait, or have the lockout hierarchy's owner reset it (tpm2_dictionarylockout --clear-lockout)")
        case TPMResponse.policyFail, TPMResponse.pcrChanged:
            return KeychainError(
                errSecCSReqFailed, "the machine's PCRs are no longer those the key was sealed to",
                hint: "the boot chain or a measured component changed; unlock another way and seal again")
        default:
            return failure.error("unsealing")
        }
    }

    /// The object's authValue for a PIN: its SHA-256, so a PIN of any length fits; empty
    /// without one.
    package static func authValue(_ pin: [UInt8]?) throws(KeychainError) -> [UInt8] {
        guard let pin else { return [] }
        guard !pin.isEmpty else { throw KeychainError(errSecParam, "the PIN is empty") }
        var digest = [UInt8](repeating: 0, count: 32)
        _ = crypto_hash_sha256(&digest, pin, UInt64(pin.count))
        return digest
    }

    /// Overwrites `bytes` with zeros in a way the compiler keeps, then empties it.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
        bytes.removeAll()
    }
}
