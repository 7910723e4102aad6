import CTSS2
import KeychainStatus

/// A tpm2-tss return code read the way kc-tpm reports it: which layer answered (the TPM
/// itself, ESAPI or the TCTI below it) and, for the TPM, its response code without the
/// handle, session or parameter number the TPM adds to it.
struct TPMResponse: Equatable {
    let raw: UInt32

    init(_ raw: TSS2_RC) { self.raw = raw }

    /// The TPM answered (layer 0), as opposed to the software stack below or beside it.
    var fromTPM: Bool { raw & 0xFF_0000 == 0 }

    /// The TPM's code with the number of the handle, session or parameter masked off
    /// (TPM 2.0 Part 2, 6.6: format-one codes carry it in bits 6 to 11).
    var code: UInt32 {
        guard fromTPM else { return raw }
        return raw & 0x80 != 0 ? raw & 0xBF : raw & 0x97F
    }

    /// The base code of a software layer (TSS2_BASE_RC_…).
    var base: UInt32 { raw & 0xFFFF }

    // The TPM response codes kc-tpm tells apart (TPM 2.0 Part 2, table 16).
    static let authFail: UInt32 = 0x08E   // TPM_RC_AUTH_FAIL: wrong authValue, counted
    static let badAuth: UInt32 = 0x0A2   // TPM_RC_BAD_AUTH: wrong authValue, not counted
    static let policyFail: UInt32 = 0x09D   // TPM_RC_POLICY_FAIL: the policy digest differs
    static let pcrChanged: UInt32 = 0x128   // TPM_RC_PCR_CHANGED: PCRs moved during the policy
    static let lockout: UInt32 = 0x921   // TPM_RC_LOCKOUT: dictionary-attack lockout

    /// `TPM response 0x98e` or `tpm2-tss 0x7000a`: for the message's end, never a secret.
    var text: String {
        fromTPM ? "TPM response 0x" + String(raw, radix: 16) : "tpm2-tss 0x" + String(raw, radix: 16)
    }

    /// A failure of the connection itself: the TCTI or ESAPI lost or never had the TPM.
    var lostTheTPM: Bool {
        !fromTPM
            && [8, 9, 10, 17, 19].contains(base)   // NO_CONNECTION, TRY_AGAIN, IO_ERROR, MALFORMED / INSUFFICIENT_RESPONSE
    }

    /// The error for a failed `step` (a few words, "creating the storage key").
    func error(_ step: String) -> KeychainError {
        if lostTheTPM {
            return KeychainError(
                errSecNotAvailable, "the TPM stopped answering while \(step) (\(text))",
                hint: "check that the TPM (or swtpm at KC_TPM_TCTI) is running")
        }
        return KeychainError(errSecInternalError, "the TPM refused \(step) (\(text))")
    }
}
