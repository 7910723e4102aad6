/// An item's access-control flags (`kcAttrAccessControlFlags`, "kcac"): the raw value of
/// Apple's `SecAccessControlCreateFlags`, and what each flag means on Linux
/// (docs/apple-compatibility.md, "Access control").
///
/// Every constraint kc can offer (user presence, the biometry flags, the device passcode,
/// a paired watch) becomes one: a fresh proof that the user is there, the keychain's
/// password typed for this operation. `.or` and `.and` are accepted (with one kind of proof
/// they mean the same). Secure Enclave keys (`.privateKeyUsage`) and application passwords
/// (`.applicationPassword`) are refused with errSecUnimplemented, Apple's status for an
/// unsupported operation; any other bit with errSecParam.
///
///     let flags = try AccessControlFlags(validating: 1)   // .userPresence
///     flags.requiresUserPresence                           // true
package struct AccessControlFlags: Equatable, Sendable {
    /// The raw value, as stored.
    package let rawValue: Int64

    /// `.userPresence`: the user proves they are there (kc: the keychain's password).
    package static let userPresence: Int64 = 1 << 0
    /// `.biometryAny` (formerly touchIDAny): on Linux, user presence.
    package static let biometryAny: Int64 = 1 << 1
    /// `.biometryCurrentSet` (formerly touchIDCurrentSet): on Linux, user presence.
    package static let biometryCurrentSet: Int64 = 1 << 3
    /// `.devicePasscode`: on Linux the keychain password, so user presence.
    package static let devicePasscode: Int64 = 1 << 4
    /// `.watch` (`.companion`): on Linux, user presence.
    package static let watch: Int64 = 1 << 5
    /// `.or`: any one constraint suffices.
    package static let or: Int64 = 1 << 14
    /// `.and`: every constraint is needed.
    package static let and: Int64 = 1 << 15
    /// `.privateKeyUsage`: a Secure Enclave key; kc has none (errSecUnimplemented).
    package static let privateKeyUsage: Int64 = 1 << 30
    /// `.applicationPassword`: an extra password from the app; not supported (errSecUnimplemented).
    package static let applicationPassword: Int64 = 1 << 31

    /// The flags that ask for the user; on Linux each is user presence.
    package static let constraints: Int64 = userPresence | biometryAny | biometryCurrentSet | devicePasscode | watch
    /// Every flag kc accepts.
    static let accepted: Int64 = constraints | or | and

    /// Checks a stored or requested value.
    /// - Throws: errSecUnimplemented for `.privateKeyUsage` and `.applicationPassword`;
    ///   errSecParam for a negative value or any bit Apple does not define.
    package init(validating raw: Int64) throws {
        guard raw >= 0 else {
            throw KeychainError(errSecParam, "\(raw) is not a valid set of access-control flags (SecAccessControlCreateFlags)")
        }
        if raw & Self.privateKeyUsage != 0 {
            throw KeychainError(
                errSecUnimplemented, "kSecAccessControlPrivateKeyUsage (a Secure Enclave key) is not supported by kc: Linux has no Secure Enclave",
                hint: "leave the flag out; .userPresence asks for the keychain password on every read")
        }
        if raw & Self.applicationPassword != 0 {
            throw KeychainError(
                errSecUnimplemented, "kSecAccessControlApplicationPassword is not supported by kc",
                hint: "use .userPresence: the keychain password is asked for on every read")
        }
        guard raw & ~Self.accepted == 0 else {
            throw KeychainError(errSecParam, "\(raw) is not a valid set of access-control flags (SecAccessControlCreateFlags)")
        }
        rawValue = raw
    }

    /// The flags of a stored item (an unknown value, which kc never writes, counts as
    /// requiring presence: the safe reading).
    package init(stored value: AttributeValue?) {
        guard case .int(let raw)? = value else { rawValue = 0; return }
        rawValue = raw
    }

    /// Whether reading the item's secret needs a fresh proof that the user is there.
    package var requiresUserPresence: Bool {
        rawValue & Self.constraints != 0 || rawValue & ~Self.accepted != 0
    }

    /// The flags' names, as `kc find` prints them (`user-presence`, `biometry-any`…).
    package var names: [String] {
        let table: [(Int64, String)] = [
            (Self.userPresence, "user-presence"), (Self.biometryAny, "biometry-any"),
            (Self.biometryCurrentSet, "biometry-current-set"), (Self.devicePasscode, "device-passcode"),
            (Self.watch, "watch"), (Self.or, "or"), (Self.and, "and")
        ]
        var result = table.filter { rawValue & $0.0 != 0 }.map(\.1)
        if rawValue & ~Self.accepted != 0 { result.append("unknown(\(rawValue & ~Self.accepted))") }
        return result
    }
}
