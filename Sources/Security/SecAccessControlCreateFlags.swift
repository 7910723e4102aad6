#if os(Linux)
/// Option flags of Core Foundation calls. (Apple: `CFOptionFlags`, an unsigned long.)
public typealias CFOptionFlags = UInt

/// What a `SecAccessControl` asks for before an item's secret is given out, with Apple's
/// names and raw values (`SecAccessControl.h`). kc stores the raw value with the item
/// (`kcAttrAccessControlFlags`); docs/apple-compatibility.md, "Access control", says what
/// each flag means on Linux.
public struct SecAccessControlCreateFlags: OptionSet, Hashable, Sendable {
    /// The raw value, as Apple's.
    public let rawValue: CFOptionFlags

    /// Flags with this raw value.
    public init(rawValue: CFOptionFlags) {
        self.rawValue = rawValue
    }

    /// The user proves presence (Apple: Touch ID, Face ID or the passcode; kc: the keychain
    /// password, typed again for every read).
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    /// Any enrolled biometry (Apple); kc has no biometry and asks as for userPresence.
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// Apple's older name of biometryAny.
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// The biometry enrolled now (Apple); kc has no biometry and asks as for userPresence.
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// Apple's older name of biometryCurrentSet.
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// The device passcode (Apple); kc: the keychain password.
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    /// A paired watch (Apple, macOS); kc has none and asks as for userPresence.
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// Apple's newer name of watch.
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// With several constraints: any one of them suffices.
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    /// With several constraints: all of them are needed.
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    /// The constraints guard a private key's operations (Secure Enclave keys): not
    /// supported by kc (SecItemAdd and SecItemUpdate return errSecUnimplemented).
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    /// An application-provided password encrypts the item as well (it comes through an
    /// LAContext, which Linux does not have): not supported by kc (errSecUnimplemented).
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// Every flag Apple defines; other bits are dropped, as Apple's SecAccessControl keeps
    /// only the constraints it knows.
    static let known: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet,
        .devicePasscode, .watch, .or, .and,
        .privateKeyUsage, .applicationPassword
    ]
    /// The flags kc cannot honour (errSecUnimplemented in SecItemAdd and SecItemUpdate).
    static let unsupported: SecAccessControlCreateFlags = [.privateKeyUsage, .applicationPassword]
}
#endif
