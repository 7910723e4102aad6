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
/// Access control object. The `Security` module turns its `SecAccessControl` into
/// kSecAttrAccessible + kcAttrAccessControlFlags; given to KeychainCore directly it is
/// errSecUnimplemented.
public let kSecAttrAccessControl = "accc"
/// Access group (part of every primary key; default "").
public let kSecAttrAccessGroup = "agrp"
/// Synchronizable flag (part of every primary key; default false).
public let kSecAttrSynchronizable = "sync"
/// Query value of kSecAttrSynchronizable matching both synchronizable and not.
public let kSecAttrSynchronizableAny = "syna"
/// A hint for sync views: not an attribute of kc items (errSecNoSuchAttr).
public let kSecAttrSyncViewHint = "vwht"
/// A hardware token (Secure Enclave): not supported (errSecUnimplemented through the
/// `Security` module; errSecNoSuchAttr in KeychainCore, which has no such attribute).
public let kSecAttrTokenID = "tkid"
/// kSecAttrTokenID value of the Secure Enclave.
public let kSecAttrTokenIDSecureEnclave = "com.apple.setoken"
/// The access group of token items: an ordinary string in kc.
public let kSecAttrAccessGroupToken = "com.apple.token"
/// A persistent reference as an attribute key: not supported (errSecParam); use kSecReturnPersistentRef.
public let kSecAttrPersistentReference = "persistref"
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
/// Protocol value: FTPAccount.
public let kSecAttrProtocolFTPAccount = "ftpa"
/// Protocol value: IRC.
public let kSecAttrProtocolIRC = "irc "
/// Protocol value: NNTP.
public let kSecAttrProtocolNNTP = "nntp"
/// Protocol value: POP3.
public let kSecAttrProtocolPOP3 = "pop3"
/// Protocol value: SOCKS.
public let kSecAttrProtocolSOCKS = "sox "
/// Protocol value: AppleTalk.
public let kSecAttrProtocolAppleTalk = "atlk"
/// Protocol value: AFP.
public let kSecAttrProtocolAFP = "afp "
/// Protocol value: Telnet.
public let kSecAttrProtocolTelnet = "teln"
/// Protocol value: HTTPProxy.
public let kSecAttrProtocolHTTPProxy = "htpx"
/// Protocol value: HTTPSProxy.
public let kSecAttrProtocolHTTPSProxy = "htsx"
/// Protocol value: FTPProxy.
public let kSecAttrProtocolFTPProxy = "ftpx"
/// Protocol value: RTSP.
public let kSecAttrProtocolRTSP = "rtsp"
/// Protocol value: RTSPProxy.
public let kSecAttrProtocolRTSPProxy = "rtsx"
/// Protocol value: DAAP.
public let kSecAttrProtocolDAAP = "daap"
/// Protocol value: EPPC.
public let kSecAttrProtocolEPPC = "eppc"
/// Protocol value: IPP.
public let kSecAttrProtocolIPP = "ipp "
/// Protocol value: NNTPS.
public let kSecAttrProtocolNNTPS = "ntps"
/// Protocol value: LDAPS.
public let kSecAttrProtocolLDAPS = "ldps"
/// Protocol value: TelnetS.
public let kSecAttrProtocolTelnetS = "tels"
/// Protocol value: IRCS.
public let kSecAttrProtocolIRCS = "ircs"
/// Protocol value: POP3S.
public let kSecAttrProtocolPOP3S = "pops"
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
/// Authentication type value: MSN.
public let kSecAttrAuthenticationTypeMSN = "msna"
/// Authentication type value: DPA.
public let kSecAttrAuthenticationTypeDPA = "dpaa"
/// Authentication type value: RPA.
public let kSecAttrAuthenticationTypeRPA = "rpaa"

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
/// Key type value: DSA (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeDSA = "43"
/// Key type value: AES (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeAES = "2147483649"
/// Key type value: DES (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeDES = "14"
/// Key type value: 3DES (Apple's raw value; stored as the number).
public let kSecAttrKeyType3DES = "17"
/// Key type value: RC2 (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeRC2 = "23"
/// Key type value: RC4 (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeRC4 = "25"
/// Key type value: CAST (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeCAST = "56"
/// Key type value: ECDSA (Apple's raw value; stored as the number).
public let kSecAttrKeyTypeECDSA = "73"

// MARK: Search

/// Match limit: kSecMatchLimitOne, kSecMatchLimitAll or a number.
public let kSecMatchLimit = "m_Limit"
/// Match limit value: one item (the default for SecItemCopyMatching).
public let kSecMatchLimitOne = "m_LimitOne"
/// Match limit value: every item.
public let kSecMatchLimitAll = "m_LimitAll"
/// Case-insensitive matching of string attributes: a kc extension (Apple ignores it).
public let kSecMatchCaseInsensitive = "m_CaseInsensitive"
/// How text attributes (string and blob kinds) of a SecItemCopyMatching query match: a kc
/// extension with no Apple counterpart, and no name in the `Security` module. The value is
/// `kcMatchTextExact` (the default), `kcMatchTextPrefix` or `kcMatchTextContains`. Like
/// kSecMatchCaseInsensitive (and combinable with it) it is answered by a scan that decrypts
/// every item of the class; like every kSecMatch… key it is errSecParam in add, update and
/// delete.
package let kcMatchText = "m_kcText"
/// kcMatchText value: the whole value, byte for byte (an index lookup).
package let kcMatchTextExact = "exact"
/// kcMatchText value: the item's value starts with the query's.
package let kcMatchTextPrefix = "prefix"
/// kcMatchText value: the query's value occurs anywhere in the item's.
package let kcMatchTextContains = "contains"
/// Search key kSecMatchPolicy: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchPolicy = "m_Policy"
/// Search key kSecMatchItemList: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchItemList = "m_ItemList"
/// Search key kSecMatchSearchList: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchSearchList = "m_SearchList"
/// Search key kSecMatchIssuers: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchIssuers = "m_Issuers"
/// Search key kSecMatchEmailAddressIfPresent: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchEmailAddressIfPresent = "m_EmailAddressIfPresent"
/// Search key kSecMatchSubjectContains: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchSubjectContains = "m_SubjectContains"
/// Search key kSecMatchHostOrSubdomainOfHost: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchHostOrSubdomainOfHost = "m_HostOrSubdomainOfHost"
/// Search key kSecMatchTrustedOnly: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchTrustedOnly = "m_TrustedOnly"
/// Search key kSecMatchValidOnDate: accepted and ignored by kc (certificate searches are not implemented).
public let kSecMatchValidOnDate = "m_ValidOnDate"

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
/// Operation prompt: the text of the user-presence prompt (a `String`).
public let kSecUseOperationPrompt = "u_OpPrompt"
/// Authentication UI choice for items that require user presence (`UserPresence`).
public let kSecUseAuthenticationUI = "u_AuthUI"
/// kSecUseAuthenticationUI value (the default): the front end may ask for a proof.
public let kSecUseAuthenticationUIAllow = "u_AuthUIA"
/// kSecUseAuthenticationUI value: errSecInteractionNotAllowed instead of asking.
public let kSecUseAuthenticationUIFail = "u_AuthUIF"
/// kSecUseAuthenticationUI value: leave such items out (SecItemCopyMatching only).
public let kSecUseAuthenticationUISkip = "u_AuthUIS"
/// Deprecated by Apple for kSecUseAuthenticationUI; `true` means Fail.
public let kSecUseNoAuthenticationUI = "u_NoAuthUI"
/// A LocalAuthentication credential reference: not supported (errSecUnimplemented).
public let kSecUseCredentialReference = "u_CredRef"
/// Limits a search to a list of items: not supported (errSecParam).
public let kSecUseItemList = "u_ItemList"

// MARK: kc extensions (not Apple keys; docs/apple-compatibility.md, "kc extensions")

/// **kc extension**: a generic password's Secret Service attribute map, `[String: String]`
/// (at most 64 pairs; names and values UTF-8, each at most 64 KiB). Stored encrypted, part
/// of the primary key when not empty, and searched by keyed blind indexes over its pairs:
/// in a query it matches the items whose map holds every given pair, and `[:]` matches the
/// items that have none (docs/format.md §4, §5, §7).
public let kcAttrSecretServiceAttributes = "kcsa"
/// **kc extension**: a generic password's Secret Service content type (a `String` such as
/// `"text/plain"`). Stored encrypted; not indexed, not in the primary key.
public let kcAttrContentType = "kcct"
/// **kc extension**: an item's access-control flags, an `Int` holding the raw value of Apple's
/// `SecAccessControlCreateFlags` (`.userPresence` = 1, `.biometryAny` = 2,
/// `.biometryCurrentSet` = 8, `.devicePasscode` = 16, `.watch` = 32, `.or` = 16384,
/// `.and` = 32768, `.privateKeyUsage` = 1 << 30, `.applicationPassword` = 1 << 31). It is what
/// the Security module stores for a `kSecAttrAccessControl` object (whose protection class
/// goes to `kSecAttrAccessible`), and what `kc add --user-presence` stores. Stored encrypted
/// in the item's metadata; neither indexed nor in the primary key; absent or 0 means none.
public let kcAttrAccessControlFlags = "kcac"
