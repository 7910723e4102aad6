// tpm2-tss's ESAPI (tss2-esys), its TCTI loader (tss2-tctildr) and marshalling (tss2-mu),
// for kc-tpm only (docs/tpm.md). tpm2-tss writes its constants as casts, `((TPM2_ALG_ID)
// 0x0023)`, which Swift does not import: the few structures kc-tpm builds are filled here,
// in C, and nothing else is.
#include <stdint.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>

/// The TCG's storage root key template (TCG TPM v2.0 Provisioning Guidance, "ECC NIST P256
/// SRK"): a restricted decryption key, AES-128-CFB for its children, a unique field of zeros,
/// so the same owner seed always gives the same key.
static inline void kc_tpm_srk_template(TPM2B_PUBLIC *out) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_ECC;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
    p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    p->parameters.eccDetail.symmetric.keyBits.aes = 128;
    p->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    p->unique.ecc.x.size = 32;
    p->unique.ecc.y.size = 32;
}

/// A keyedhash sealed data object (no sign, no decrypt) bound to its TPM and parent. With
/// `user_with_auth` its authValue authorizes it; otherwise only `policy` does. `no_da`
/// keeps an object without a PIN out of the dictionary-attack counter.
static inline int kc_tpm_sealed_template(TPM2B_PUBLIC *out, int user_with_auth, int no_da, const uint8_t *policy, size_t policy_size) {
    memset(out, 0, sizeof *out);
    if (policy_size > sizeof out->publicArea.authPolicy.buffer) return -1;
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_KEYEDHASH;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | (user_with_auth ? TPMA_OBJECT_USERWITHAUTH : 0) | (no_da ? TPMA_OBJECT_NODA : 0);
    p->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    p->authPolicy.size = (UINT16)policy_size;
    if (policy_size) memcpy(p->authPolicy.buffer, policy, policy_size);
    return 0;
}

/// Whether `pub` is the sealed object `kc_tpm_sealed_template` makes for a blob whose header
/// says `has_pin` and whose policy is `policy`: a keyedhash object of this TPM and parent,
/// counted by the dictionary-attack logic exactly when it has a PIN, authorized by its
/// authValue exactly when it has no policy, with that policy. The TPM checks the public part
/// against the private part when it loads them, so a header edited to say "no PIN" (which
/// would have kc-tpm try an empty authValue, a wrong PIN the TPM counts) is told here.
static inline int kc_tpm_sealed_matches(const TPM2B_PUBLIC *pub, int has_pin, const uint8_t *policy, size_t policy_size) {
    const TPMT_PUBLIC *p = &pub->publicArea;
    TPMA_OBJECT expected = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | (policy_size == 0 ? TPMA_OBJECT_USERWITHAUTH : 0) | (has_pin ? 0 : TPMA_OBJECT_NODA);
    if (p->type != TPM2_ALG_KEYEDHASH || p->nameAlg != TPM2_ALG_SHA256) return 0;
    if (p->objectAttributes != expected) return 0;
    if (p->authPolicy.size != policy_size) return 0;
    return policy_size == 0 || memcmp(p->authPolicy.buffer, policy, policy_size) == 0;
}

/// The sensitive part: the data to seal and the object's authValue (the PIN, or empty).
static inline int kc_tpm_sensitive(TPM2B_SENSITIVE_CREATE *out, const uint8_t *data, size_t data_size, const uint8_t *auth, size_t auth_size) {
    memset(out, 0, sizeof *out);
    if (data_size > sizeof out->sensitive.data.buffer || auth_size > sizeof out->sensitive.userAuth.buffer) return -1;
    out->sensitive.data.size = (UINT16)data_size;
    if (data_size) memcpy(out->sensitive.data.buffer, data, data_size);
    out->sensitive.userAuth.size = (UINT16)auth_size;
    if (auth_size) memcpy(out->sensitive.userAuth.buffer, auth, auth_size);
    return 0;
}

/// An authValue (the PIN) for Esys_TR_SetAuth.
static inline int kc_tpm_auth(TPM2B_AUTH *out, const uint8_t *auth, size_t auth_size) {
    memset(out, 0, sizeof *out);
    if (auth_size > sizeof out->buffer) return -1;
    out->size = (UINT16)auth_size;
    if (auth_size) memcpy(out->buffer, auth, auth_size);
    return 0;
}

/// The SHA-256 bank's PCRs whose bits are set in `mask` (bit n: PCR n, 0 to 23); none when 0.
static inline void kc_tpm_pcr_selection(TPML_PCR_SELECTION *out, uint32_t mask) {
    memset(out, 0, sizeof *out);
    if (mask == 0) return;
    out->count = 1;
    out->pcrSelections[0].hash = TPM2_ALG_SHA256;
    out->pcrSelections[0].sizeofSelect = 3;
    out->pcrSelections[0].pcrSelect[0] = mask & 0xff;
    out->pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
    out->pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
}

/// AES-128-CFB, the session's parameter encryption.
static inline void kc_tpm_session_symmetric(TPMT_SYM_DEF *out) {
    memset(out, 0, sizeof *out);
    out->algorithm = TPM2_ALG_AES;
    out->keyBits.aes = 128;
    out->mode.aes = TPM2_ALG_CFB;
}

/// Session kinds, hash and attributes as plain numbers (their macros are casts).
static const TPM2_SE kc_tpm_se_hmac = TPM2_SE_HMAC;
static const TPM2_SE kc_tpm_se_policy = TPM2_SE_POLICY;
static const TPM2_SE kc_tpm_se_trial = TPM2_SE_TRIAL;
static const TPMI_ALG_HASH kc_tpm_sha256 = TPM2_ALG_SHA256;
/// Encrypt the first parameter both ways, keep the session after the command.
static const TPMA_SESSION kc_tpm_session_crypt = TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION;
/// Encrypt the response's first parameter only (TPM2_Unseal has no command parameter).
static const TPMA_SESSION kc_tpm_session_response = TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION;
static const TPMA_SESSION kc_tpm_session_mask = 0xff;
static const TPM2_CAP kc_tpm_cap_properties = TPM2_CAP_TPM_PROPERTIES;
static const TPM2_PT kc_tpm_pt_lockout_counter = TPM2_PT_LOCKOUT_COUNTER;
static const TPM2_PT kc_tpm_pt_max_auth_fail = TPM2_PT_MAX_AUTH_FAIL;
static const TPM2_PT kc_tpm_pt_lockout_interval = TPM2_PT_LOCKOUT_INTERVAL;

/// The session handles ESAPI names with macros.
static const ESYS_TR kc_tpm_tr_none = ESYS_TR_NONE;
static const ESYS_TR kc_tpm_tr_password = ESYS_TR_PASSWORD;
static const ESYS_TR kc_tpm_tr_owner = ESYS_TR_RH_OWNER;

/// The TPM property `property` from a capability answer, or -1 when absent.
static inline int64_t kc_tpm_property(const TPMS_CAPABILITY_DATA *data, TPM2_PT property) {
    if (!data || data->capability != TPM2_CAP_TPM_PROPERTIES) return -1;
    for (UINT32 i = 0; i < data->data.tpmProperties.count && i < TPM2_MAX_TPM_PROPERTIES; i++)
        if (data->data.tpmProperties.tpmProperty[i].property == property) return data->data.tpmProperties.tpmProperty[i].value;
    return -1;
}
