#if os(Linux)
import KeychainCore
import Foundation

/// When an item may be read (its protection class, a `kSecAttrAccessible…` value) and what
/// the user must do first (its flags), as `kSecAttrAccessControl` takes and returns it.
/// (Apple: the opaque CF type `SecAccessControl`.) The Security module stores it as
/// `kSecAttrAccessible` plus kc's `kcAttrAccessControlFlags`, and gives one back in every
/// attribute result, as Apple returns `accc`. Two are equal when protection and flags are.
public final class SecAccessControl: Hashable, CustomStringConvertible, Sendable {
    /// The protection class: one of the seven `kSecAttrAccessible…` raw values.
    let protection: String
    /// The flags, only those Apple defines.
    let flags: SecAccessControlCreateFlags

    /// An access control of `protection` (already checked) and `flags`.
    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags.intersection(.known)
    }

    /// The protection classes Apple's SecAccessControlCreateWithFlags accepts, less its
    /// private ones (kc has no kSecAttrAccessibleUntilReboot).
    static let protections: Set<String> = [
        kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
        kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        kSecAttrAccessibleAlwaysThisDeviceOnly, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
    ]

    /// Checks `protection` and `flags` by Apple's rules (`SecAccessControlCreateWithFlags`).
    /// - Throws: errSecParam with Apple's message: a protection that is not a
    ///   kSecAttrAccessible value, both `.or` and `.and`, both biometry flags,
    ///   `.userPresence` with a flag other than `.applicationPassword`/`.privateKeyUsage`.
    static func checked(protection: Any, flags: SecAccessControlCreateFlags) throws -> SecAccessControl {
        guard let name = protection as? String, protections.contains(name) else {
            throw KeychainError(errSecParam, "SecAccessControl: invalid protection: \(protection)")
        }
        if flags.contains(.or), flags.contains(.and) {
            throw KeychainError(errSecParam, "only one logical operation can be set")
        }
        if flags.contains(.biometryAny), flags.contains(.biometryCurrentSet) {
            throw KeychainError(errSecParam, "only one bio constraint can be set")
        }
        if flags.contains(.userPresence),
            !flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).isEmpty
        {
            throw KeychainError(
                errSecParam, "kSecAccessControlUserPresence can be combined only with kSecAccessControlApplicationPassword and kSecAccessControlPrivateKeyUsage"
            )
        }
        return SecAccessControl(protection: name, flags: flags)
    }

    /// Equal protection and flags.
    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.protection == rhs.protection && lhs.flags == rhs.flags
    }

    /// Hashes protection and flags.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(protection)
        hasher.combine(flags.rawValue)
    }

    /// `<SecAccessControlRef: ak; flags 0x1>`, after Apple's debug description.
    public var description: String {
        flags.isEmpty
            ? "<SecAccessControlRef: \(protection)>"
            : "<SecAccessControlRef: \(protection); flags 0x\(String(flags.rawValue, radix: 16))>"
    }
}

/// Makes an access control for `kSecAttrAccessControl`: `protection` is a
/// `kSecAttrAccessible…` value, `flags` what the user must do before a read. Apple's
/// function, with its signature and rules; on failure it returns nil and, when `error` is
/// given, a retained `CFError` in kSecErrorDomain with code errSecParam (release it with
/// `takeRetainedValue()`).
///
///     var error: Unmanaged<CFError>?
///     let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked as CFTypeRef,
///                                                  .userPresence, &error)
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef,
    _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    makeAccessControl(protection, flags, error)
}

/// `SecAccessControlCreateWithFlags` with the protection given as a `kSecAttrAccessible…`
/// constant directly (`CFString` is `String` here, not an object, so this overload lets
/// `SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)`
/// build as on Apple platforms).
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFString,
    _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    makeAccessControl(protection, flags, error)
}

/// The access control, or nil with the reason in `error`.
private func makeAccessControl(
    _ protection: Any, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    error?.pointee = nil
    do {
        return try SecAccessControl.checked(protection: protection, flags: flags)
    } catch let failure as KeychainError {
        error?.pointee = .passRetained(CFError.status(failure.status, failure.message))
    } catch {
        // checked throws only KeychainError.
    }
    return nil
}
#endif
