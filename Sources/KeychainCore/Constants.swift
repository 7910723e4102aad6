// The kSec… keys and values of Apple's Security framework, with Apple's raw string values
// (`SecItemConstants.c`): libraries and their tests compare them, so they must not change.
// See docs/apple-compatibility.md for what each does in kc.

// MARK: Class

/// Query key: the item class.
public let kSecClass = "class"
/// Class value: a generic password.
public let kSecClassGenericPassword = "genp"
/// Class value: an internet password.
public let kSecClassInternetPassword = "inet"
/// Class value: a certificate.
public let kSecClassCertificate = "cert"
/// Class value: a cryptographic key.
public let kSecClassKey = "keys"
/// Class value: an identity (a certificate and its private key).
public let kSecClassIdentity = "idnt"

// MARK: Attributes

/// When the item is accessible (stored; default `ak`, certificates `dk`).
public let kSecAttrAccessible = "pdmn"
/// Access control object: not supported in kc (errSecUnimplemented).
public let kSecAttrAccessControl = "accc"
/// Access group (part of every primary key; default "").
public let kSecAttrAccessGroup = "agrp"
/// Synchronizable flag (part of every primary key; default false).
public let kSecAttrSynchronizable = "sync"
/// Query value of kSecAttrSynchronizable matching both synchronizable and not.
public let kSecAttrSynchronizableAny = "syna"
/// Creation date, set by kc on add.
public let kSecAttrCreationDate = "cdat"
/// Modification date, set by kc on add and update.
public let kSecAttrModificationDate = "mdat"
/// User-visible description (kind).
public let kSecAttrDescription = "desc"
/// User-editable comment.
public let kSecAttrComment = "icmt"
/// Creator code (a number).
public let kSecAttrCreator = "crtr"
/// Type code (a number).
public let kSecAttrType = "type"
/// User-visible label.
public let kSecAttrLabel = "labl"
/// Alias.
public let kSecAttrAlias = "alis"
/// Invisible flag.
public let kSecAttrIsInvisible = "invi"
/// Negative flag.
public let kSecAttrIsNegative = "nega"
/// Account name (generic and internet passwords).
public let kSecAttrAccount = "acct"
/// Service name (generic passwords).
public let kSecAttrService = "svce"
/// Application-defined generic data (generic passwords).
public let kSecAttrGeneric = "gena"
/// Security domain (internet passwords).
public let kSecAttrSecurityDomain = "sdmn"
/// Server host (internet passwords).
public let kSecAttrServer = "srvr"
/// Protocol (internet passwords), one of the kSecAttrProtocol… values.
public let kSecAttrProtocol = "ptcl"
/// Authentication type (internet passwords).
public let kSecAttrAuthenticationType = "atyp"
/// Port (internet passwords).
public let kSecAttrPort = "port"
/// Path (internet passwords).
public let kSecAttrPath = "path"
/// Certificate subject (DER).
public let kSecAttrSubject = "subj"
/// Certificate issuer (DER).
public let kSecAttrIssuer = "issr"
/// Certificate serial number.
public let kSecAttrSerialNumber = "slnr"
/// Certificate subject key identifier.
public let kSecAttrSubjectKeyID = "skid"
/// Hash of the certificate's public key.
public let kSecAttrPublicKeyHash = "pkhh"
/// Certificate type.
public let kSecAttrCertificateType = "ctyp"
/// Certificate encoding.
public let kSecAttrCertificateEncoding = "cenc"
/// Key class (public, private, symmetric).
public let kSecAttrKeyClass = "kcls"
/// Application label of a key.
public let kSecAttrApplicationLabel = "klbl"
/// Permanent flag of a key.
public let kSecAttrIsPermanent = "perm"
/// Private flag of a key.
public let kSecAttrIsPrivate = "priv"
/// Modifiable flag of a key.
public let kSecAttrIsModifiable = "modi"
/// Application tag of a key.
public let kSecAttrApplicationTag = "atag"
/// Creator of a key (same raw value as kSecAttrCreator).
public let kSecAttrKeyCreator = "crtr"
/// Key algorithm (same raw value as kSecAttrType).
public let kSecAttrKeyType = "type"
/// Key size in bits.
public let kSecAttrKeySizeInBits = "bsiz"
/// Effective key size in bits.
public let kSecAttrEffectiveKeySize = "esiz"
/// Key validity start.
public let kSecAttrStartDate = "sdat"
/// Key validity end.
public let kSecAttrEndDate = "edat"
/// Key is sensitive.
public let kSecAttrIsSensitive = "sens"
/// Key was always sensitive.
public let kSecAttrWasAlwaysSensitive = "asen"
/// Key is extractable.
public let kSecAttrIsExtractable = "extr"
/// Key was never extractable.
public let kSecAttrWasNeverExtractable = "next"
/// Key can encrypt.
public let kSecAttrCanEncrypt = "encr"
/// Key can decrypt.
public let kSecAttrCanDecrypt = "decr"
/// Key can derive.
public let kSecAttrCanDerive = "drve"
/// Key can sign.
public let kSecAttrCanSign = "sign"
/// Key can verify.
public let kSecAttrCanVerify = "vrfy"
/// Key can sign-recover.
public let kSecAttrCanSignRecover = "snrc"
/// Key can verify-recover.
public let kSecAttrCanVerifyRecover = "vyrc"
/// Key can wrap.
public let kSecAttrCanWrap = "wrap"
/// Key can unwrap.
public let kSecAttrCanUnwrap = "unwp"

// MARK: kSecAttrAccessible values

/// Accessible while unlocked (the default).
public let kSecAttrAccessibleWhenUnlocked = "ak"
/// Accessible after the first unlock.
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
/// Always accessible (deprecated by Apple; certificates' default).
public let kSecAttrAccessibleAlways = "dk"
/// Accessible while unlocked, this device only.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
/// Accessible after first unlock, this device only.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
/// Always accessible, this device only.
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"
/// Accessible when a passcode is set, this device only.
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"

// MARK: Protocols and authentication types

/// FTP.
public let kSecAttrProtocolFTP = "ftp "
/// HTTP.
public let kSecAttrProtocolHTTP = "http"
/// HTTPS.
public let kSecAttrProtocolHTTPS = "htps"
/// SSH.
public let kSecAttrProtocolSSH = "ssh "
/// SMTP.
public let kSecAttrProtocolSMTP = "smtp"
/// IMAP.
public let kSecAttrProtocolIMAP = "imap"
/// IMAPS.
public let kSecAttrProtocolIMAPS = "imps"
/// LDAP.
public let kSecAttrProtocolLDAP = "ldap"
/// FTPS.
public let kSecAttrProtocolFTPS = "ftps"
/// SMB.
public let kSecAttrProtocolSMB = "smb "
/// Default authentication type.
public let kSecAttrAuthenticationTypeDefault = "dflt"
/// HTTP basic authentication.
public let kSecAttrAuthenticationTypeHTTPBasic = "http"
/// HTTP digest authentication.
public let kSecAttrAuthenticationTypeHTTPDigest = "httd"
/// HTML form authentication.
public let kSecAttrAuthenticationTypeHTMLForm = "form"
/// NTLM authentication.
public let kSecAttrAuthenticationTypeNTLM = "ntlm"

// MARK: Key classes and types

/// Public key class.
public let kSecAttrKeyClassPublic = "0"
/// Private key class.
public let kSecAttrKeyClassPrivate = "1"
/// Symmetric key class.
public let kSecAttrKeyClassSymmetric = "2"
/// RSA keys.
public let kSecAttrKeyTypeRSA = "42"
/// Elliptic-curve keys.
public let kSecAttrKeyTypeEC = "73"
/// Elliptic-curve keys (same as kSecAttrKeyTypeEC).
public let kSecAttrKeyTypeECSECPrimeRandom = "73"
/// Ed25519 keys.
public let kSecAttrKeyTypeEd25519 = "105"
/// X25519 keys.
public let kSecAttrKeyTypeX25519 = "106"

// MARK: Search

/// Match limit: kSecMatchLimitOne, kSecMatchLimitAll or a number.
public let kSecMatchLimit = "m_Limit"
/// Match limit value: one item (the default for SecItemCopyMatching).
public let kSecMatchLimitOne = "m_LimitOne"
/// Match limit value: every item.
public let kSecMatchLimitAll = "m_LimitAll"
/// Case-insensitive matching of string attributes: a kc extension (Apple ignores it).
public let kSecMatchCaseInsensitive = "m_CaseInsensitive"

// MARK: Return types

/// Return the item's data.
public let kSecReturnData = "r_Data"
/// Return the item's attributes.
public let kSecReturnAttributes = "r_Attributes"
/// Return an item reference: not supported in kc (errSecUnimplemented).
public let kSecReturnRef = "r_Ref"
/// Return a persistent reference (20 bytes: class ‖ item id).
public let kSecReturnPersistentRef = "r_PersistentRef"

// MARK: Values

/// The item's secret data.
public let kSecValueData = "v_Data"
/// An item reference: not supported in kc (errSecUnimplemented).
public let kSecValueRef = "v_Ref"
/// A persistent reference returned earlier.
public let kSecValuePersistentRef = "v_PersistentRef"

// MARK: Use

/// Ignored, as on Linux there is only one kind of keychain.
public let kSecUseDataProtectionKeychain = "nleg"
/// Authentication context: not supported in kc (errSecUnimplemented).
public let kSecUseAuthenticationContext = "u_AuthCtx"
/// Operation prompt: accepted and ignored.
public let kSecUseOperationPrompt = "u_OpPrompt"
/// Authentication UI choice: accepted and ignored (kc never shows UI from the library).
public let kSecUseAuthenticationUI = "u_AuthUI"
