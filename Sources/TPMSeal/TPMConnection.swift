import CTSS2
import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// One conversation with the TPM through ESAPI: the TCTI (KC_TPM_TCTI's configuration,
/// else the kernel's TPM device, /dev/tpmrm0 then /dev/tpm0, never tpm2-tss's default
/// search, which ends at a simulator's TCP port any local user can bind), the storage
/// primary made for this call, and the sessions started on it. Every transient object and
/// session is flushed when the connection ends, so a call leaves the TPM as it found it.
final class TPMConnection {
    private var tcti: OpaquePointer?
    private var esys: OpaquePointer?
    private var transients: [ESYS_TR] = []

    /// Connects to the TPM that `configuration` names (`swtpm:host=127.0.0.1,port=2321`),
    /// or, when nil, the kernel's device (`defaultTCTIs`, in order).
    /// - Throws: errSecNotAvailable when no TPM answers there.
    init(tcti configuration: String?) throws(KeychainError) {
        try Self.check(configuration)
        var tctiContext: OpaquePointer?
        var rc: TSS2_RC = 1
        for candidate in configuration.map({ [$0] }) ?? Self.defaultTCTIs {
            rc = Tss2_TctiLdr_Initialize(candidate, &tctiContext)
            if rc == 0, tctiContext != nil { break }
        }
        guard rc == 0, let tctiContext else {
            let where_ = configuration.map { " at \($0)" } ?? " (no /dev/tpmrm0 or /dev/tpm0 can be opened)"
            throw KeychainError(
                errSecNotAvailable, "no TPM is reachable\(where_)",
                hint: "kc-tpm talks to the TPM named by KC_TPM_TCTI, else to the kernel's TPM device (never to a simulator it was not told of)")
        }
        tcti = tctiContext
        var context: OpaquePointer?
        let started = Esys_Initialize(&context, tctiContext, nil)
        guard started == 0, let context else {
            Tss2_TctiLdr_Finalize(&tcti)
            throw KeychainError(errSecNotAvailable, "the TPM could not be opened (\(TPMResponse(started).text))")
        }
        esys = context
    }

    /// The TPMs tried, in order, when KC_TPM_TCTI is unset: the kernel's devices only.
    /// tpm2-tss's own default search would go on to swtpm and mssim on 127.0.0.1:2321, a
    /// port any local user can listen on, and that user's simulator would then receive the
    /// seal (and own the lockout counter and the PCRs); a socket TCTI is used only when
    /// KC_TPM_TCTI names it.
    static let defaultTCTIs = ["device:/dev/tpmrm0", "device:/dev/tpm0"]

    /// The TCTIs kc-tpm loads. tpm2-tss's loader also takes a library's file name and
    /// dlopens it: a configuration that names anything else is refused rather than loaded.
    static let tctis: Set<String> = ["device", "swtpm", "mssim", "tabrmd"]

    /// Refuses a configuration whose TCTI is not one of `tctis`.
    static func check(_ configuration: String?) throws(KeychainError) {
        guard let configuration else { return }
        let name = String(configuration.prefix { $0 != ":" })
        guard tctis.contains(name) else {
            throw KeychainError(
                errSecParam, "KC_TPM_TCTI names a TCTI kc-tpm does not load (\(name.prefix(40)))",
                hint: "use device:/dev/tpmrm0, swtpm:host=H,port=P, mssim:host=H,port=P or tabrmd")
        }
        // The device TCTI opens its path read-write and writes TPM commands into it: a
        // regular file named there (a typo in a unit's Environment=) would be overwritten.
        if name == "device" {
            let path = configuration.dropFirst("device".count).drop { $0 == ":" }
            var st = stat()
            if !path.isEmpty, stat(String(path), &st) == 0, st.st_mode & S_IFMT != S_IFCHR {
                throw KeychainError(
                    errSecParam, "KC_TPM_TCTI names \(String(path).prefix(200)), which is not a TPM device (a character device)",
                    hint: "use device:/dev/tpmrm0")
            }
        }
    }

    deinit {
        for handle in transients.reversed() { _ = Esys_FlushContext(esys, handle) }
        if esys != nil { Esys_Finalize(&esys) }
        if tcti != nil { Tss2_TctiLdr_Finalize(&tcti) }
    }

    /// The ESAPI context.
    var context: OpaquePointer? { esys }

    /// Runs an ESAPI call; a failure becomes `TPMResponse`.
    func call(_ body: (OpaquePointer?) -> TSS2_RC) -> TPMResponse? {
        let rc = body(esys)
        return rc == 0 ? nil : TPMResponse(rc)
    }

    /// Remembers a transient handle to flush at the end.
    func keep(_ handle: ESYS_TR) { transients.append(handle) }

    /// Flushes a transient handle now (a session no longer needed).
    func flush(_ handle: ESYS_TR) {
        transients.removeAll { $0 == handle }
        _ = Esys_FlushContext(esys, handle)
    }

    /// The storage primary of the owner hierarchy from the TCG's ECC P-256 SRK template
    /// (`kc_tpm_srk_template`): the same key on every call while the owner seed stays, so
    /// nothing need be kept in the TPM between calls. Returns its handle and its name.
    func storagePrimary() throws(KeychainError) -> (handle: ESYS_TR, name: [UInt8]) {
        var template = TPM2B_PUBLIC()
        kc_tpm_srk_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var outside = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var handle: ESYS_TR = kc_tpm_tr_none
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        if let failure = call({
            Esys_CreatePrimary(
                $0, kc_tpm_tr_owner, kc_tpm_tr_password, kc_tpm_tr_none, kc_tpm_tr_none, &sensitive, &template, &outside,
                &creationPCR, &handle, &outPublic, &creationData, &creationHash, &ticket)
        }) {
            if failure.fromTPM && failure.code == TPMResponse.lockout {
                throw KeychainError(errSecAuthFailed, "the TPM's owner hierarchy is locked out (\(failure.text))")
            }
            throw failure.error("creating its storage key (the owner hierarchy may have a password)")
        }
        Esys_Free(outPublic)
        Esys_Free(creationData)
        Esys_Free(creationHash)
        Esys_Free(ticket)
        keep(handle)
        var name: UnsafeMutablePointer<TPM2B_NAME>?
        if let failure = call({ Esys_TR_GetName($0, handle, &name) }) { throw failure.error("naming its storage key") }
        defer { Esys_Free(name) }
        guard let name else { throw KeychainError(errSecInternalError, "the TPM's storage key has no name") }
        let bytes = withUnsafeBytes(of: name.pointee.name) { Array($0.prefix(Int(name.pointee.size))) }
        return (handle, bytes)
    }

    /// Starts a session salted with the storage primary's key (so the session key never
    /// crosses the bus) and parameter encryption by AES-128-CFB; `kind` is
    /// `kc_tpm_se_hmac`, `kc_tpm_se_policy` or `kc_tpm_se_trial`.
    func session(_ kind: TPM2_SE, saltedBy primary: ESYS_TR?) throws(KeychainError) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        kc_tpm_session_symmetric(&symmetric)
        var handle: ESYS_TR = kc_tpm_tr_none
        if let failure = call({
            Esys_StartAuthSession(
                $0, primary ?? kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, nil, kind,
                &symmetric, kc_tpm_sha256, &handle)
        }) {
            throw failure.error("starting a session")
        }
        keep(handle)
        return handle
    }

    /// Sets a session's attributes (`kc_tpm_session_crypt`, `kc_tpm_session_response`).
    func setAttributes(_ session: ESYS_TR, _ attributes: TPMA_SESSION) throws(KeychainError) {
        if let failure = call({ Esys_TRSess_SetAttributes($0, session, attributes, kc_tpm_session_mask) }) {
            throw failure.error("setting a session's attributes")
        }
    }

    /// The TPM's dictionary-attack state: failures counted, failures allowed, and the
    /// seconds after which one failure is forgotten; nil where the TPM does not say.
    func lockoutState() -> (counter: Int64, max: Int64, interval: Int64)? {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        guard
            call({ Esys_GetCapability($0, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_tr_none, kc_tpm_cap_properties, kc_tpm_pt_lockout_counter, 3, &more, &data) })
                == nil,
            let data
        else { return nil }
        defer { Esys_Free(data) }
        let counter = kc_tpm_property(data, kc_tpm_pt_lockout_counter)
        let max = kc_tpm_property(data, kc_tpm_pt_max_auth_fail)
        let interval = kc_tpm_property(data, kc_tpm_pt_lockout_interval)
        guard counter >= 0, max >= 0, interval >= 0 else { return nil }
        return (counter, max, interval)
    }
}
