#if os(Linux)
import KeychainCore
// The rest of the status codes of Apple's `SecBase.h`, with Apple's names and values, so that
// code that names them (error enums of keychain wrappers, `switch status`) builds here.
// KeychainCore defines the ones kc returns or documents (docs/apple-compatibility.md, "Status
// codes"); kc never returns any of these. Each comment is Apple's message from SecBase.h.

/// File already open with write permission.
public let errSecOpWr: OSStatus = -49
/// Apple's status errSecInternalComponent (SecBase.h gives it no message).
public let errSecInternalComponent: OSStatus = -2070
/// Apple's status errSecCoreFoundationUnknown (SecBase.h gives it no message).
public let errSecCoreFoundationUnknown: OSStatus = -4960
/// The specified callback function is already installed.
public let errSecDuplicateCallback: OSStatus = -25297
/// The specified callback function is not valid.
public let errSecInvalidCallback: OSStatus = -25298
/// There is not enough memory available to use the specified item.
public let errSecBufferTooSmall: OSStatus = -25301
/// The specified item is no longer valid. It may have been deleted from the keychain.
public let errSecInvalidItemRef: OSStatus = -25304
/// Unable to search the current keychain.
public let errSecInvalidSearchRef: OSStatus = -25305
/// This item specifies a key size which is too large or too small.
public let errSecKeySizeNotAllowed: OSStatus = -25311
/// A required component (data storage module) could not be loaded. You may need to restart your computer.
public let errSecNoStorageModule: OSStatus = -25312
/// A required component (certificate module) could not be loaded. You may need to restart your computer.
public let errSecNoCertificateModule: OSStatus = -25313
/// A required component (policy module) could not be loaded. You may need to restart your computer.
public let errSecNoPolicyModule: OSStatus = -25314
/// The contents of this item cannot be retrieved.
public let errSecDataNotAvailable: OSStatus = -25316
/// The contents of this item cannot be modified.
public let errSecDataNotModifiable: OSStatus = -25317
/// One or more certificates required to validate this certificate cannot be found.
public let errSecCreateChainFailed: OSStatus = -25318
/// The specified preferences domain is not valid.
public let errSecInvalidPrefsDomain: OSStatus = -25319
/// In dark wake, no UI possible.
public let errSecInDarkWake: OSStatus = -25320
/// The specified access control list is not in standard (simple) form.
public let errSecACLNotSimple: OSStatus = -25240
/// The specified policy cannot be found.
public let errSecPolicyNotFound: OSStatus = -25241
/// The specified trust setting is invalid.
public let errSecInvalidTrustSetting: OSStatus = -25242
/// The specified item has no access control.
public let errSecNoAccessForItem: OSStatus = -25243
/// Invalid attempt to change the owner of this item.
public let errSecInvalidOwnerEdit: OSStatus = -25244
/// No trust results are available.
public let errSecTrustNotAvailable: OSStatus = -25245
/// Import/Export format unsupported.
public let errSecUnsupportedFormat: OSStatus = -25256
/// Unknown format in import.
public let errSecUnknownFormat: OSStatus = -25257
/// Key material must be wrapped for export.
public let errSecKeyIsSensitive: OSStatus = -25258
/// An attempt was made to import multiple private keys.
public let errSecMultiplePrivKeys: OSStatus = -25259
/// Passphrase is required for import/export.
public let errSecPassphraseRequired: OSStatus = -25260
/// The password reference was invalid.
public let errSecInvalidPasswordRef: OSStatus = -25261
/// The Trust Settings Record was corrupted.
public let errSecInvalidTrustSettings: OSStatus = -25262
/// No Trust Settings were found.
public let errSecNoTrustSettings: OSStatus = -25263
/// MAC verification failed during PKCS12 import (wrong password?)
public let errSecPkcs12VerifyFailure: OSStatus = -25264
/// A certificate was not signed by its proposed parent.
public let errSecNotSigner: OSStatus = -26267
/// The required service is not available.
public let errSecServiceNotAvailable: OSStatus = -67585
/// The client ID is not correct.
public let errSecInsufficientClientID: OSStatus = -67586
/// A device reset has occurred.
public let errSecDeviceReset: OSStatus = -67587
/// A device failure has occurred.
public let errSecDeviceFailed: OSStatus = -67588
/// Adding an application ACL subject failed.
public let errSecAppleAddAppACLSubject: OSStatus = -67589
/// The public key is incomplete.
public let errSecApplePublicKeyIncomplete: OSStatus = -67590
/// A signature mismatch has occurred.
public let errSecAppleSignatureMismatch: OSStatus = -67591
/// The specified key has an invalid start date.
public let errSecAppleInvalidKeyStartDate: OSStatus = -67592
/// The specified key has an invalid end date.
public let errSecAppleInvalidKeyEndDate: OSStatus = -67593
/// A conversion error has occurred.
public let errSecConversionError: OSStatus = -67594
/// A SSLv2 rollback error has occurred.
public let errSecAppleSSLv2Rollback: OSStatus = -67595
/// The quota was exceeded.
public let errSecQuotaExceeded: OSStatus = -67596
/// The file is too big.
public let errSecFileTooBig: OSStatus = -67597
/// The specified database has an invalid blob.
public let errSecInvalidDatabaseBlob: OSStatus = -67598
/// The specified database has an invalid key blob.
public let errSecInvalidKeyBlob: OSStatus = -67599
/// The specified database has an incompatible blob.
public let errSecIncompatibleDatabaseBlob: OSStatus = -67600
/// The specified database has an incompatible key blob.
public let errSecIncompatibleKeyBlob: OSStatus = -67601
/// A host name mismatch has occurred.
public let errSecHostNameMismatch: OSStatus = -67602
/// There is an unknown critical extension flag.
public let errSecUnknownCriticalExtensionFlag: OSStatus = -67603
/// No basic constraints were found.
public let errSecNoBasicConstraints: OSStatus = -67604
/// No basic CA constraints were found.
public let errSecNoBasicConstraintsCA: OSStatus = -67605
/// The authority key ID is not valid.
public let errSecInvalidAuthorityKeyID: OSStatus = -67606
/// The subject key ID is not valid.
public let errSecInvalidSubjectKeyID: OSStatus = -67607
/// The key usage is not valid for the specified policy.
public let errSecInvalidKeyUsageForPolicy: OSStatus = -67608
/// The extended key usage is not valid.
public let errSecInvalidExtendedKeyUsage: OSStatus = -67609
/// The ID linkage is not valid.
public let errSecInvalidIDLinkage: OSStatus = -67610
/// The path length constraint was exceeded.
public let errSecPathLengthConstraintExceeded: OSStatus = -67611
/// The root or anchor certificate is not valid.
public let errSecInvalidRoot: OSStatus = -67612
/// The CRL has expired.
public let errSecCRLExpired: OSStatus = -67613
/// The CRL is not yet valid.
public let errSecCRLNotValidYet: OSStatus = -67614
/// The CRL was not found.
public let errSecCRLNotFound: OSStatus = -67615
/// The CRL server is down.
public let errSecCRLServerDown: OSStatus = -67616
/// The CRL has a bad Uniform Resource Identifier.
public let errSecCRLBadURI: OSStatus = -67617
/// An unknown certificate extension was encountered.
public let errSecUnknownCertExtension: OSStatus = -67618
/// An unknown CRL extension was encountered.
public let errSecUnknownCRLExtension: OSStatus = -67619
/// The CRL is not trusted.
public let errSecCRLNotTrusted: OSStatus = -67620
/// The CRL policy failed.
public let errSecCRLPolicyFailed: OSStatus = -67621
/// The issuing distribution point was not valid.
public let errSecIDPFailure: OSStatus = -67622
/// An email address mismatch was encountered.
public let errSecSMIMEEmailAddressesNotFound: OSStatus = -67623
/// The appropriate extended key usage for SMIME was not found.
public let errSecSMIMEBadExtendedKeyUsage: OSStatus = -67624
/// The key usage is not compatible with SMIME.
public let errSecSMIMEBadKeyUsage: OSStatus = -67625
/// The key usage extension is not marked as critical.
public let errSecSMIMEKeyUsageNotCritical: OSStatus = -67626
/// No email address was found in the certificate.
public let errSecSMIMENoEmailAddress: OSStatus = -67627
/// The subject alternative name extension is not marked as critical.
public let errSecSMIMESubjAltNameNotCritical: OSStatus = -67628
/// The appropriate extended key usage for SSL was not found.
public let errSecSSLBadExtendedKeyUsage: OSStatus = -67629
/// The OCSP response was incorrect or could not be parsed.
public let errSecOCSPBadResponse: OSStatus = -67630
/// The OCSP request was incorrect or could not be parsed.
public let errSecOCSPBadRequest: OSStatus = -67631
/// OCSP service is unavailable.
public let errSecOCSPUnavailable: OSStatus = -67632
/// The OCSP server did not recognize this certificate.
public let errSecOCSPStatusUnrecognized: OSStatus = -67633
/// An end-of-data was detected.
public let errSecEndOfData: OSStatus = -67634
/// An incomplete certificate revocation check occurred.
public let errSecIncompleteCertRevocationCheck: OSStatus = -67635
/// A network failure occurred.
public let errSecNetworkFailure: OSStatus = -67636
/// The OCSP response was not trusted to a root or anchor certificate.
public let errSecOCSPNotTrustedToAnchor: OSStatus = -67637
/// The record was modified.
public let errSecRecordModified: OSStatus = -67638
/// The OCSP response had an invalid signature.
public let errSecOCSPSignatureError: OSStatus = -67639
/// The OCSP response had no signer.
public let errSecOCSPNoSigner: OSStatus = -67640
/// The OCSP responder was given a malformed request.
public let errSecOCSPResponderMalformedReq: OSStatus = -67641
/// The OCSP responder encountered an internal error.
public let errSecOCSPResponderInternalError: OSStatus = -67642
/// The OCSP responder is busy, try again later.
public let errSecOCSPResponderTryLater: OSStatus = -67643
/// The OCSP responder requires a signature.
public let errSecOCSPResponderSignatureRequired: OSStatus = -67644
/// The OCSP responder rejected this request as unauthorized.
public let errSecOCSPResponderUnauthorized: OSStatus = -67645
/// The OCSP response nonce did not match the request.
public let errSecOCSPResponseNonceMismatch: OSStatus = -67646
/// Code signing encountered an incorrect certificate chain length.
public let errSecCodeSigningBadCertChainLength: OSStatus = -67647
/// Code signing found no basic constraints.
public let errSecCodeSigningNoBasicConstraints: OSStatus = -67648
/// Code signing encountered an incorrect path length constraint.
public let errSecCodeSigningBadPathLengthConstraint: OSStatus = -67649
/// Code signing found no extended key usage.
public let errSecCodeSigningNoExtendedKeyUsage: OSStatus = -67650
/// Code signing indicated use of a development-only certificate.
public let errSecCodeSigningDevelopment: OSStatus = -67651
/// Resource signing has encountered an incorrect certificate chain length.
public let errSecResourceSignBadCertChainLength: OSStatus = -67652
/// Resource signing has encountered an error in the extended key usage.
public let errSecResourceSignBadExtKeyUsage: OSStatus = -67653
/// The trust setting for this policy was set to Deny.
public let errSecTrustSettingDeny: OSStatus = -67654
/// An invalid certificate subject name was encountered.
public let errSecInvalidSubjectName: OSStatus = -67655
/// An unknown qualified certificate statement was encountered.
public let errSecUnknownQualifiedCertStatement: OSStatus = -67656
/// Apple's status errSecMobileMeRequestQueued (SecBase.h gives it no message).
public let errSecMobileMeRequestQueued: OSStatus = -67657
/// Apple's status errSecMobileMeRequestRedirected (SecBase.h gives it no message).
public let errSecMobileMeRequestRedirected: OSStatus = -67658
/// Apple's status errSecMobileMeServerError (SecBase.h gives it no message).
public let errSecMobileMeServerError: OSStatus = -67659
/// Apple's status errSecMobileMeServerNotAvailable (SecBase.h gives it no message).
public let errSecMobileMeServerNotAvailable: OSStatus = -67660
/// Apple's status errSecMobileMeServerAlreadyExists (SecBase.h gives it no message).
public let errSecMobileMeServerAlreadyExists: OSStatus = -67661
/// Apple's status errSecMobileMeServerServiceErr (SecBase.h gives it no message).
public let errSecMobileMeServerServiceErr: OSStatus = -67662
/// Apple's status errSecMobileMeRequestAlreadyPending (SecBase.h gives it no message).
public let errSecMobileMeRequestAlreadyPending: OSStatus = -67663
/// Apple's status errSecMobileMeNoRequestPending (SecBase.h gives it no message).
public let errSecMobileMeNoRequestPending: OSStatus = -67664
/// Apple's status errSecMobileMeCSRVerifyFailure (SecBase.h gives it no message).
public let errSecMobileMeCSRVerifyFailure: OSStatus = -67665
/// Apple's status errSecMobileMeFailedConsistencyCheck (SecBase.h gives it no message).
public let errSecMobileMeFailedConsistencyCheck: OSStatus = -67666
/// A function was called without initializing CSSM.
public let errSecNotInitialized: OSStatus = -67667
/// The CSSM handle does not match with the service type.
public let errSecInvalidHandleUsage: OSStatus = -67668
/// A reference to the calling module was not found in the list of authorized callers.
public let errSecPVCReferentNotFound: OSStatus = -67669
/// A function address was not within the verified module.
public let errSecFunctionIntegrityFail: OSStatus = -67670
/// A memory error has occurred.
public let errSecMemoryError: OSStatus = -67672
/// A Module Directory Service error has occurred.
public let errSecMDSError: OSStatus = -67674
/// An invalid pointer was encountered.
public let errSecInvalidPointer: OSStatus = -67675
/// Self-check has failed.
public let errSecSelfCheckFailed: OSStatus = -67676
/// A function has failed.
public let errSecFunctionFailed: OSStatus = -67677
/// A module manifest verification failure has occurred.
public let errSecModuleManifestVerifyFailed: OSStatus = -67678
/// An invalid GUID was encountered.
public let errSecInvalidGUID: OSStatus = -67679
/// An invalid handle was encountered.
public let errSecInvalidHandle: OSStatus = -67680
/// An invalid DB list was encountered.
public let errSecInvalidDBList: OSStatus = -67681
/// An invalid passthrough ID was encountered.
public let errSecInvalidPassthroughID: OSStatus = -67682
/// An invalid network address was encountered.
public let errSecInvalidNetworkAddress: OSStatus = -67683
/// The certificate revocation list is already signed.
public let errSecCRLAlreadySigned: OSStatus = -67684
/// An invalid number of fields were encountered.
public let errSecInvalidNumberOfFields: OSStatus = -67685
/// A verification failure occurred.
public let errSecVerificationFailure: OSStatus = -67686
/// An unknown tag was encountered.
public let errSecUnknownTag: OSStatus = -67687
/// An invalid signature was encountered.
public let errSecInvalidSignature: OSStatus = -67688
/// An invalid name was encountered.
public let errSecInvalidName: OSStatus = -67689
/// An invalid certificate reference was encountered.
public let errSecInvalidCertificateRef: OSStatus = -67690
/// An invalid certificate group was encountered.
public let errSecInvalidCertificateGroup: OSStatus = -67691
/// The specified tag was not found.
public let errSecTagNotFound: OSStatus = -67692
/// The specified query was not valid.
public let errSecInvalidQuery: OSStatus = -67693
/// An invalid value was detected.
public let errSecInvalidValue: OSStatus = -67694
/// A callback has failed.
public let errSecCallbackFailed: OSStatus = -67695
/// An ACL delete operation has failed.
public let errSecACLDeleteFailed: OSStatus = -67696
/// An ACL replace operation has failed.
public let errSecACLReplaceFailed: OSStatus = -67697
/// An ACL add operation has failed.
public let errSecACLAddFailed: OSStatus = -67698
/// An ACL change operation has failed.
public let errSecACLChangeFailed: OSStatus = -67699
/// Invalid access credentials were encountered.
public let errSecInvalidAccessCredentials: OSStatus = -67700
/// An invalid record was encountered.
public let errSecInvalidRecord: OSStatus = -67701
/// An invalid ACL was encountered.
public let errSecInvalidACL: OSStatus = -67702
/// An invalid sample value was encountered.
public let errSecInvalidSampleValue: OSStatus = -67703
/// An incompatible version was encountered.
public let errSecIncompatibleVersion: OSStatus = -67704
/// The privilege was not granted.
public let errSecPrivilegeNotGranted: OSStatus = -67705
/// An invalid scope was encountered.
public let errSecInvalidScope: OSStatus = -67706
/// The PVC is already configured.
public let errSecPVCAlreadyConfigured: OSStatus = -67707
/// An invalid PVC was encountered.
public let errSecInvalidPVC: OSStatus = -67708
/// The EMM load has failed.
public let errSecEMMLoadFailed: OSStatus = -67709
/// The EMM unload has failed.
public let errSecEMMUnloadFailed: OSStatus = -67710
/// The add-in load operation has failed.
public let errSecAddinLoadFailed: OSStatus = -67711
/// An invalid key was encountered.
public let errSecInvalidKeyRef: OSStatus = -67712
/// An invalid key hierarchy was encountered.
public let errSecInvalidKeyHierarchy: OSStatus = -67713
/// The add-in unload operation has failed.
public let errSecAddinUnloadFailed: OSStatus = -67714
/// A library reference was not found.
public let errSecLibraryReferenceNotFound: OSStatus = -67715
/// An invalid add-in function table was encountered.
public let errSecInvalidAddinFunctionTable: OSStatus = -67716
/// An invalid service mask was encountered.
public let errSecInvalidServiceMask: OSStatus = -67717
/// A module was not loaded.
public let errSecModuleNotLoaded: OSStatus = -67718
/// An invalid subservice ID was encountered.
public let errSecInvalidSubServiceID: OSStatus = -67719
/// An attribute was not in the context.
public let errSecAttributeNotInContext: OSStatus = -67720
/// A module failed to initialize.
public let errSecModuleManagerInitializeFailed: OSStatus = -67721
/// A module was not found.
public let errSecModuleManagerNotFound: OSStatus = -67722
/// An event notification callback was not found.
public let errSecEventNotificationCallbackNotFound: OSStatus = -67723
/// An input length error was encountered.
public let errSecInputLengthError: OSStatus = -67724
/// An output length error was encountered.
public let errSecOutputLengthError: OSStatus = -67725
/// The privilege is not supported.
public let errSecPrivilegeNotSupported: OSStatus = -67726
/// A device error was encountered.
public let errSecDeviceError: OSStatus = -67727
/// The CSP handle was busy.
public let errSecAttachHandleBusy: OSStatus = -67728
/// You are not logged in.
public let errSecNotLoggedIn: OSStatus = -67729
/// An algorithm mismatch was encountered.
public let errSecAlgorithmMismatch: OSStatus = -67730
/// The key usage is incorrect.
public let errSecKeyUsageIncorrect: OSStatus = -67731
/// The key blob type is incorrect.
public let errSecKeyBlobTypeIncorrect: OSStatus = -67732
/// The key header is inconsistent.
public let errSecKeyHeaderInconsistent: OSStatus = -67733
/// The key header format is not supported.
public let errSecUnsupportedKeyFormat: OSStatus = -67734
/// The key size is not supported.
public let errSecUnsupportedKeySize: OSStatus = -67735
/// The key usage mask is not valid.
public let errSecInvalidKeyUsageMask: OSStatus = -67736
/// The key usage mask is not supported.
public let errSecUnsupportedKeyUsageMask: OSStatus = -67737
/// The key attribute mask is not valid.
public let errSecInvalidKeyAttributeMask: OSStatus = -67738
/// The key attribute mask is not supported.
public let errSecUnsupportedKeyAttributeMask: OSStatus = -67739
/// The key label is not valid.
public let errSecInvalidKeyLabel: OSStatus = -67740
/// The key label is not supported.
public let errSecUnsupportedKeyLabel: OSStatus = -67741
/// The key format is not valid.
public let errSecInvalidKeyFormat: OSStatus = -67742
/// The vector of buffers is not supported.
public let errSecUnsupportedVectorOfBuffers: OSStatus = -67743
/// The input vector is not valid.
public let errSecInvalidInputVector: OSStatus = -67744
/// The output vector is not valid.
public let errSecInvalidOutputVector: OSStatus = -67745
/// An invalid context was encountered.
public let errSecInvalidContext: OSStatus = -67746
/// An invalid algorithm was encountered.
public let errSecInvalidAlgorithm: OSStatus = -67747
/// A key attribute was not valid.
public let errSecInvalidAttributeKey: OSStatus = -67748
/// A key attribute was missing.
public let errSecMissingAttributeKey: OSStatus = -67749
/// An init vector attribute was not valid.
public let errSecInvalidAttributeInitVector: OSStatus = -67750
/// An init vector attribute was missing.
public let errSecMissingAttributeInitVector: OSStatus = -67751
/// A salt attribute was not valid.
public let errSecInvalidAttributeSalt: OSStatus = -67752
/// A salt attribute was missing.
public let errSecMissingAttributeSalt: OSStatus = -67753
/// A padding attribute was not valid.
public let errSecInvalidAttributePadding: OSStatus = -67754
/// A padding attribute was missing.
public let errSecMissingAttributePadding: OSStatus = -67755
/// A random number attribute was not valid.
public let errSecInvalidAttributeRandom: OSStatus = -67756
/// A random number attribute was missing.
public let errSecMissingAttributeRandom: OSStatus = -67757
/// A seed attribute was not valid.
public let errSecInvalidAttributeSeed: OSStatus = -67758
/// A seed attribute was missing.
public let errSecMissingAttributeSeed: OSStatus = -67759
/// A passphrase attribute was not valid.
public let errSecInvalidAttributePassphrase: OSStatus = -67760
/// A passphrase attribute was missing.
public let errSecMissingAttributePassphrase: OSStatus = -67761
/// A key length attribute was not valid.
public let errSecInvalidAttributeKeyLength: OSStatus = -67762
/// A key length attribute was missing.
public let errSecMissingAttributeKeyLength: OSStatus = -67763
/// A block size attribute was not valid.
public let errSecInvalidAttributeBlockSize: OSStatus = -67764
/// A block size attribute was missing.
public let errSecMissingAttributeBlockSize: OSStatus = -67765
/// An output size attribute was not valid.
public let errSecInvalidAttributeOutputSize: OSStatus = -67766
/// An output size attribute was missing.
public let errSecMissingAttributeOutputSize: OSStatus = -67767
/// The number of rounds attribute was not valid.
public let errSecInvalidAttributeRounds: OSStatus = -67768
/// The number of rounds attribute was missing.
public let errSecMissingAttributeRounds: OSStatus = -67769
/// An algorithm parameters attribute was not valid.
public let errSecInvalidAlgorithmParms: OSStatus = -67770
/// An algorithm parameters attribute was missing.
public let errSecMissingAlgorithmParms: OSStatus = -67771
/// A label attribute was not valid.
public let errSecInvalidAttributeLabel: OSStatus = -67772
/// A label attribute was missing.
public let errSecMissingAttributeLabel: OSStatus = -67773
/// A key type attribute was not valid.
public let errSecInvalidAttributeKeyType: OSStatus = -67774
/// A key type attribute was missing.
public let errSecMissingAttributeKeyType: OSStatus = -67775
/// A mode attribute was not valid.
public let errSecInvalidAttributeMode: OSStatus = -67776
/// A mode attribute was missing.
public let errSecMissingAttributeMode: OSStatus = -67777
/// An effective bits attribute was not valid.
public let errSecInvalidAttributeEffectiveBits: OSStatus = -67778
/// An effective bits attribute was missing.
public let errSecMissingAttributeEffectiveBits: OSStatus = -67779
/// A start date attribute was not valid.
public let errSecInvalidAttributeStartDate: OSStatus = -67780
/// A start date attribute was missing.
public let errSecMissingAttributeStartDate: OSStatus = -67781
/// An end date attribute was not valid.
public let errSecInvalidAttributeEndDate: OSStatus = -67782
/// An end date attribute was missing.
public let errSecMissingAttributeEndDate: OSStatus = -67783
/// A version attribute was not valid.
public let errSecInvalidAttributeVersion: OSStatus = -67784
/// A version attribute was missing.
public let errSecMissingAttributeVersion: OSStatus = -67785
/// A prime attribute was not valid.
public let errSecInvalidAttributePrime: OSStatus = -67786
/// A prime attribute was missing.
public let errSecMissingAttributePrime: OSStatus = -67787
/// A base attribute was not valid.
public let errSecInvalidAttributeBase: OSStatus = -67788
/// A base attribute was missing.
public let errSecMissingAttributeBase: OSStatus = -67789
/// A subprime attribute was not valid.
public let errSecInvalidAttributeSubprime: OSStatus = -67790
/// A subprime attribute was missing.
public let errSecMissingAttributeSubprime: OSStatus = -67791
/// An iteration count attribute was not valid.
public let errSecInvalidAttributeIterationCount: OSStatus = -67792
/// An iteration count attribute was missing.
public let errSecMissingAttributeIterationCount: OSStatus = -67793
/// A database handle attribute was not valid.
public let errSecInvalidAttributeDLDBHandle: OSStatus = -67794
/// A database handle attribute was missing.
public let errSecMissingAttributeDLDBHandle: OSStatus = -67795
/// An access credentials attribute was not valid.
public let errSecInvalidAttributeAccessCredentials: OSStatus = -67796
/// An access credentials attribute was missing.
public let errSecMissingAttributeAccessCredentials: OSStatus = -67797
/// A public key format attribute was not valid.
public let errSecInvalidAttributePublicKeyFormat: OSStatus = -67798
/// A public key format attribute was missing.
public let errSecMissingAttributePublicKeyFormat: OSStatus = -67799
/// A private key format attribute was not valid.
public let errSecInvalidAttributePrivateKeyFormat: OSStatus = -67800
/// A private key format attribute was missing.
public let errSecMissingAttributePrivateKeyFormat: OSStatus = -67801
/// A symmetric key format attribute was not valid.
public let errSecInvalidAttributeSymmetricKeyFormat: OSStatus = -67802
/// A symmetric key format attribute was missing.
public let errSecMissingAttributeSymmetricKeyFormat: OSStatus = -67803
/// A wrapped key format attribute was not valid.
public let errSecInvalidAttributeWrappedKeyFormat: OSStatus = -67804
/// A wrapped key format attribute was missing.
public let errSecMissingAttributeWrappedKeyFormat: OSStatus = -67805
/// A staged operation is in progress.
public let errSecStagedOperationInProgress: OSStatus = -67806
/// A staged operation was not started.
public let errSecStagedOperationNotStarted: OSStatus = -67807
/// A cryptographic verification failure has occurred.
public let errSecVerifyFailed: OSStatus = -67808
/// The query size is unknown.
public let errSecQuerySizeUnknown: OSStatus = -67809
/// A block size mismatch occurred.
public let errSecBlockSizeMismatch: OSStatus = -67810
/// The public key was inconsistent.
public let errSecPublicKeyInconsistent: OSStatus = -67811
/// A device verification failure has occurred.
public let errSecDeviceVerifyFailed: OSStatus = -67812
/// An invalid login name was detected.
public let errSecInvalidLoginName: OSStatus = -67813
/// The user is already logged in.
public let errSecAlreadyLoggedIn: OSStatus = -67814
/// An invalid digest algorithm was detected.
public let errSecInvalidDigestAlgorithm: OSStatus = -67815
/// An invalid CRL group was detected.
public let errSecInvalidCRLGroup: OSStatus = -67816
/// The certificate cannot operate.
public let errSecCertificateCannotOperate: OSStatus = -67817
/// An expired certificate was detected.
public let errSecCertificateExpired: OSStatus = -67818
/// The certificate is not yet valid.
public let errSecCertificateNotValidYet: OSStatus = -67819
/// The certificate was revoked.
public let errSecCertificateRevoked: OSStatus = -67820
/// The certificate was suspended.
public let errSecCertificateSuspended: OSStatus = -67821
/// Insufficient credentials were detected.
public let errSecInsufficientCredentials: OSStatus = -67822
/// The action was not valid.
public let errSecInvalidAction: OSStatus = -67823
/// The authority was not valid.
public let errSecInvalidAuthority: OSStatus = -67824
/// A verify action has failed.
public let errSecVerifyActionFailed: OSStatus = -67825
/// The certificate authority was not valid.
public let errSecInvalidCertAuthority: OSStatus = -67826
/// The CRL authority was not valid.
public let errSecInvaldCRLAuthority: OSStatus = -67827
/// The CRL encoding was not valid.
public let errSecInvalidCRLEncoding: OSStatus = -67828
/// The CRL type was not valid.
public let errSecInvalidCRLType: OSStatus = -67829
/// The CRL was not valid.
public let errSecInvalidCRL: OSStatus = -67830
/// The form type was not valid.
public let errSecInvalidFormType: OSStatus = -67831
/// The ID was not valid.
public let errSecInvalidID: OSStatus = -67832
/// The identifier was not valid.
public let errSecInvalidIdentifier: OSStatus = -67833
/// The index was not valid.
public let errSecInvalidIndex: OSStatus = -67834
/// The policy identifiers are not valid.
public let errSecInvalidPolicyIdentifiers: OSStatus = -67835
/// The time specified was not valid.
public let errSecInvalidTimeString: OSStatus = -67836
/// The trust policy reason was not valid.
public let errSecInvalidReason: OSStatus = -67837
/// The request inputs are not valid.
public let errSecInvalidRequestInputs: OSStatus = -67838
/// The response vector was not valid.
public let errSecInvalidResponseVector: OSStatus = -67839
/// The stop-on policy was not valid.
public let errSecInvalidStopOnPolicy: OSStatus = -67840
/// The tuple was not valid.
public let errSecInvalidTuple: OSStatus = -67841
/// Multiple values are not supported.
public let errSecMultipleValuesUnsupported: OSStatus = -67842
/// The certificate was not trusted.
public let errSecNotTrusted: OSStatus = -67843
/// No default authority was detected.
public let errSecNoDefaultAuthority: OSStatus = -67844
/// The trust policy had a rejected form.
public let errSecRejectedForm: OSStatus = -67845
/// The request was lost.
public let errSecRequestLost: OSStatus = -67846
/// The request was rejected.
public let errSecRequestRejected: OSStatus = -67847
/// The address type is not supported.
public let errSecUnsupportedAddressType: OSStatus = -67848
/// The service is not supported.
public let errSecUnsupportedService: OSStatus = -67849
/// The tuple group was not valid.
public let errSecInvalidTupleGroup: OSStatus = -67850
/// The base ACLs are not valid.
public let errSecInvalidBaseACLs: OSStatus = -67851
/// The tuple credentials are not valid.
public let errSecInvalidTupleCredendtials: OSStatus = -67852
/// The encoding was not valid.
public let errSecInvalidEncoding: OSStatus = -67853
/// The validity period was not valid.
public let errSecInvalidValidityPeriod: OSStatus = -67854
/// The requestor was not valid.
public let errSecInvalidRequestor: OSStatus = -67855
/// The request descriptor was not valid.
public let errSecRequestDescriptor: OSStatus = -67856
/// The bundle information was not valid.
public let errSecInvalidBundleInfo: OSStatus = -67857
/// The CRL index was not valid.
public let errSecInvalidCRLIndex: OSStatus = -67858
/// No field values were detected.
public let errSecNoFieldValues: OSStatus = -67859
/// The field format is not supported.
public let errSecUnsupportedFieldFormat: OSStatus = -67860
/// The index information is not supported.
public let errSecUnsupportedIndexInfo: OSStatus = -67861
/// The locality is not supported.
public let errSecUnsupportedLocality: OSStatus = -67862
/// The number of attributes is not supported.
public let errSecUnsupportedNumAttributes: OSStatus = -67863
/// The number of indexes is not supported.
public let errSecUnsupportedNumIndexes: OSStatus = -67864
/// The number of record types is not supported.
public let errSecUnsupportedNumRecordTypes: OSStatus = -67865
/// Too many fields were specified.
public let errSecFieldSpecifiedMultiple: OSStatus = -67866
/// The field format was incompatible.
public let errSecIncompatibleFieldFormat: OSStatus = -67867
/// The parsing module was not valid.
public let errSecInvalidParsingModule: OSStatus = -67868
/// The database is locked.
public let errSecDatabaseLocked: OSStatus = -67869
/// The data store is open.
public let errSecDatastoreIsOpen: OSStatus = -67870
/// A missing value was detected.
public let errSecMissingValue: OSStatus = -67871
/// The query limits are not supported.
public let errSecUnsupportedQueryLimits: OSStatus = -67872
/// The number of selection predicates is not supported.
public let errSecUnsupportedNumSelectionPreds: OSStatus = -67873
/// The operator is not supported.
public let errSecUnsupportedOperator: OSStatus = -67874
/// The database location is not valid.
public let errSecInvalidDBLocation: OSStatus = -67875
/// The access request is not valid.
public let errSecInvalidAccessRequest: OSStatus = -67876
/// The index information is not valid.
public let errSecInvalidIndexInfo: OSStatus = -67877
/// The new owner is not valid.
public let errSecInvalidNewOwner: OSStatus = -67878
/// The modify mode is not valid.
public let errSecInvalidModifyMode: OSStatus = -67879
/// A required certificate extension is missing.
public let errSecMissingRequiredExtension: OSStatus = -67880
/// The extended key usage extension was not marked critical.
public let errSecExtendedKeyUsageNotCritical: OSStatus = -67881
/// A timestamp was expected but was not found.
public let errSecTimestampMissing: OSStatus = -67882
/// The timestamp was not valid.
public let errSecTimestampInvalid: OSStatus = -67883
/// The timestamp was not trusted.
public let errSecTimestampNotTrusted: OSStatus = -67884
/// The timestamp service is not available.
public let errSecTimestampServiceNotAvailable: OSStatus = -67885
/// An unrecognized or unsupported Algorithm Identifier in timestamp.
public let errSecTimestampBadAlg: OSStatus = -67886
/// The timestamp transaction is not permitted or supported.
public let errSecTimestampBadRequest: OSStatus = -67887
/// The timestamp data submitted has the wrong format.
public let errSecTimestampBadDataFormat: OSStatus = -67888
/// The time source for the Timestamp Authority is not available.
public let errSecTimestampTimeNotAvailable: OSStatus = -67889
/// The requested policy is not supported by the Timestamp Authority.
public let errSecTimestampUnacceptedPolicy: OSStatus = -67890
/// The requested extension is not supported by the Timestamp Authority.
public let errSecTimestampUnacceptedExtension: OSStatus = -67891
/// The additional information requested is not available.
public let errSecTimestampAddInfoNotAvailable: OSStatus = -67892
/// The timestamp request cannot be handled due to system failure.
public let errSecTimestampSystemFailure: OSStatus = -67893
/// A signing time was expected but was not found.
public let errSecSigningTimeMissing: OSStatus = -67894
/// A timestamp transaction was rejected.
public let errSecTimestampRejection: OSStatus = -67895
/// A timestamp transaction is waiting.
public let errSecTimestampWaiting: OSStatus = -67896
/// A timestamp authority revocation warning was issued.
public let errSecTimestampRevocationWarning: OSStatus = -67897
/// A timestamp authority revocation notification was issued.
public let errSecTimestampRevocationNotification: OSStatus = -67898
/// The requested policy is not allowed for this certificate.
public let errSecCertificatePolicyNotAllowed: OSStatus = -67899
/// The requested name is not allowed for this certificate.
public let errSecCertificateNameNotAllowed: OSStatus = -67900
/// The validity period in the certificate exceeds the maximum allowed.
public let errSecCertificateValidityPeriodTooLong: OSStatus = -67901
/// The verified certificate is a CA rather than an end-entity.
public let errSecCertificateIsCA: OSStatus = -67902
#endif
