/// A result code, as in Apple's Security framework (`SecBase.h`).
public typealias OSStatus = Int32

/// No error.
public let errSecSuccess: OSStatus = 0
/// Function or operation not implemented.
public let errSecUnimplemented: OSStatus = -4
/// The disk is full.
public let errSecDiskFull: OSStatus = -34
/// I/O error.
public let errSecIO: OSStatus = -36
/// One or more parameters passed to a function were not valid.
public let errSecParam: OSStatus = -50
/// Write permissions error.
public let errSecWrPerm: OSStatus = -61
/// Failed to allocate memory.
public let errSecAllocate: OSStatus = -108
/// User canceled the operation.
public let errSecUserCanceled: OSStatus = -128
/// Bad parameter or invalid state for operation.
public let errSecBadReq: OSStatus = -909
/// No keychain is available.
public let errSecNotAvailable: OSStatus = -25291
/// This keychain cannot be modified.
public let errSecReadOnly: OSStatus = -25292
/// The user name or passphrase you entered is not correct.
public let errSecAuthFailed: OSStatus = -25293
/// The specified keychain could not be found.
public let errSecNoSuchKeychain: OSStatus = -25294
/// The specified keychain is not a valid keychain file.
public let errSecInvalidKeychain: OSStatus = -25295
/// A keychain with the same name already exists.
public let errSecDuplicateKeychain: OSStatus = -25296
/// The specified item already exists in the keychain.
public let errSecDuplicateItem: OSStatus = -25299
/// The specified item could not be found in the keychain.
public let errSecItemNotFound: OSStatus = -25300
/// This item contains information which is too large or in a format that cannot be displayed.
public let errSecDataTooLarge: OSStatus = -25302
/// The specified attribute does not exist.
public let errSecNoSuchAttr: OSStatus = -25303
/// The specified item does not appear to be a valid keychain item.
public let errSecNoSuchClass: OSStatus = -25306
/// A default keychain could not be found.
public let errSecNoDefaultKeychain: OSStatus = -25307
/// User interaction is not allowed.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The specified attribute could not be modified.
public let errSecReadOnlyAttr: OSStatus = -25309
/// This keychain was created by a different version of the system software and cannot be opened.
public let errSecWrongSecVersion: OSStatus = -25310
/// User interaction is required, but is currently not allowed.
public let errSecInteractionRequired: OSStatus = -25315
/// Unable to decode the provided data.
public let errSecDecode: OSStatus = -26275
/// A required entitlement isn't present.
public let errSecMissingEntitlement: OSStatus = -34018
/// Client is restricted and is not permitted to perform this operation: kc returns it to a
/// team keychain's member whose removal the signed log shows (docs/errors.md).
public let errSecRestrictedAPI: OSStatus = -34020
/// The code failed to satisfy specified code requirement(s): kc's peer is not established
/// as the real kc agent, so no password was sent to it.
public let errSecCSReqFailed: OSStatus = -67050
/// An internal error has occurred.
public let errSecInternalError: OSStatus = -67671
/// Invalid data was encountered.
public let errSecInvalidData: OSStatus = -67673

/// Apple's English messages for the status codes kc knows, verbatim from the trailing
/// comments of `SecBase.h` (see `docs/errors.md`).
let statusMessages: [OSStatus: String] = [
    0: "No error.",
    -4: "Function or operation not implemented.",
    -34: "The disk is full.",
    -36: "I/O error.",
    -49: "File already open with write permission.",
    -50: "One or more parameters passed to a function were not valid.",
    -61: "Write permissions error.",
    -108: "Failed to allocate memory.",
    -128: "User canceled the operation.",
    -909: "Bad parameter or invalid state for operation.",
    -25291: "No keychain is available. You may need to restart your computer.",
    -25292: "This keychain cannot be modified.",
    -25293: "The user name or passphrase you entered is not correct.",
    -25294: "The specified keychain could not be found.",
    -25295: "The specified keychain is not a valid keychain file.",
    -25296: "A keychain with the same name already exists.",
    -25297: "The specified callback function is already installed.",
    -25298: "The specified callback function is not valid.",
    -25299: "The specified item already exists in the keychain.",
    -25300: "The specified item could not be found in the keychain.",
    -25301: "There is not enough memory available to use the specified item.",
    -25302: "This item contains information which is too large or in a format that cannot be displayed.",
    -25303: "The specified attribute does not exist.",
    -25304: "The specified item is no longer valid. It may have been deleted from the keychain.",
    -25305: "Unable to search the current keychain.",
    -25306: "The specified item does not appear to be a valid keychain item.",
    -25307: "A default keychain could not be found.",
    -25308: "User interaction is not allowed.",
    -25309: "The specified attribute could not be modified.",
    -25310: "This keychain was created by a different version of the system software and cannot be opened.",
    -25311: "This item specifies a key size which is too large or too small.",
    -25312: "A required component (data storage module) could not be loaded. You may need to restart your computer.",
    -25313: "A required component (certificate module) could not be loaded. You may need to restart your computer.",
    -25314: "A required component (policy module) could not be loaded. You may need to restart your computer.",
    -25315: "User interaction is required, but is currently not allowed.",
    -25316: "The contents of this item cannot be retrieved.",
    -25317: "The contents of this item cannot be modified.",
    -25318: "One or more certificates required to validate this certificate cannot be found.",
    -25319: "The specified preferences domain is not valid.",
    -25320: "In dark wake, no UI possible",
    -25240: "The specified access control list is not in standard (simple) form.",
    -25241: "The specified policy cannot be found.",
    -25243: "The specified item has no access control.",
    -25244: "Invalid attempt to change the owner of this item.",
    -25256: "Import/Export format unsupported.",
    -25257: "Unknown format in import.",
    -25260: "Passphrase is required for import/export.",
    -25264: "MAC verification failed during PKCS12 import (wrong password?)",
    -26267: "A certificate was not signed by its proposed parent.",
    -26275: "Unable to decode the provided data.",
    -34018: "A required entitlement isn't present.",
    -34020: "Client is restricted and is not permitted to perform this operation.",
    -67050: "The code failed to satisfy specified code requirement(s).",
    -67585: "The required service is not available.",
    -67671: "An internal error has occurred.",
    -67673: "Invalid data was encountered.",
    -67694: "An invalid value was detected."
]

/// Returns Apple's message for a status code, or `"OSStatus N"` for a code without one,
/// as `SecCopyErrorMessageString` does.
///
///     SecCopyErrorMessageString(errSecItemNotFound, nil)
///     // "The specified item could not be found in the keychain."
///
/// Mirrors Apple's `SecCopyErrorMessageString(_:_:)`; the second argument is reserved and ignored.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> String? {
    statusMessages[status] ?? "OSStatus \(status)"
}
