#if os(Linux)
import KeychainCore
import Foundation

/// An error from a Core Foundation style call, such as `SecAccessControlCreateWithFlags`'s
/// out-parameter. (Apple: `CFError`, toll-free bridged to `NSError`.) It is an `NSError`
/// here too, so `error as Error`, `as NSError`, `.domain` and `.code` behave as there.
///
///     var error: Unmanaged<CFError>?
///     guard let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, &error) else {
///         throw error!.takeRetainedValue() as Error
///     }
public final class CFError: NSError, @unchecked Sendable {
    /// An error in `domain` with `code` and `userInfo`.
    override public init(domain: String, code: Int, userInfo dict: [String: Any]? = nil) {
        super.init(domain: domain, code: code, userInfo: dict)
    }

    /// Decoding is not supported: a CFError is never archived.
    public required init?(coder aDecoder: NSCoder) {
        return nil
    }

    /// An error in kSecErrorDomain (`NSOSStatusErrorDomain`) with `status` as its code and
    /// `description` as its description, as Apple's Security calls make them.
    static func status(_ status: OSStatus, _ description: String) -> CFError {
        CFError(
            domain: kCFErrorDomainOSStatus, code: Int(status),
            userInfo: [kCFErrorDescriptionKey: description])
    }
}

/// The domain of errors whose code is an `OSStatus`. (Apple: `kCFErrorDomainOSStatus`,
/// the same string as `NSOSStatusErrorDomain` and the Security framework's `kSecErrorDomain`.)
public let kCFErrorDomainOSStatus: CFString = "NSOSStatusErrorDomain"
/// The domain of the Security framework's errors: the same as kCFErrorDomainOSStatus.
public let kSecErrorDomain: CFString = kCFErrorDomainOSStatus
/// The userInfo key of an error's developer-facing description. (Apple: `kCFErrorDescriptionKey`.)
public let kCFErrorDescriptionKey: CFString = "NSDescription"

/// An error's domain. (Apple: `CFErrorGetDomain`.)
public func CFErrorGetDomain(_ err: CFError!) -> CFString! {
    err?.domain
}

/// An error's code. (Apple: `CFErrorGetCode`.)
public func CFErrorGetCode(_ err: CFError!) -> CFIndex {
    err?.code ?? 0
}

/// An error's userInfo dictionary, empty when it has none. (Apple: `CFErrorCopyUserInfo`.)
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! {
    NSDictionary(dictionary: err?.userInfo ?? [:])
}

/// An error's description, for a person to read. (Apple: `CFErrorCopyDescription`.)
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! {
    err?.localizedDescription
}
#endif
