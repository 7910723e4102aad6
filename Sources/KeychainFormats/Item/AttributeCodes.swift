import KeychainCore
/// The names of coded attribute values, as `kc find` and `kc list` print them for people
/// (`accessible: when-unlocked`, not `ak`). JSON and exports keep the codes (scripts compare
/// them); docs/commands.md lists these names.
///
/// The names follow Apple's constants: kSecAttrAccessibleWhenUnlocked becomes
/// `when-unlocked`, kSecAttrKeyTypeRSA `rsa`, CSSM_CERT_X_509v3 `x509v3`; protocols and
/// authentication types take the names `-r` and `-t` accept. A code kc has no name for
/// prints as it is stored.
package enum AttributeCodes {
    /// kSecAttrAccessible values (Apple's SecItem.h).
    package static let accessibility: [String: String] = [
        "ak": "when-unlocked", "ck": "after-first-unlock", "dk": "always",
        "aku": "when-unlocked-this-device-only", "cku": "after-first-unlock-this-device-only",
        "dku": "always-this-device-only", "akpu": "when-passcode-set-this-device-only"
    ]

    /// kSecAttrKeyClass values.
    package static let keyClasses: [Int: String] = [0: "public", 1: "private", 2: "symmetric"]

    /// kSecAttrKeyType values (CSSM_ALGORITHMS, as Apple's SecItem.h gives them).
    package static let keyTypes: [Int: String] = [
        42: "rsa", 43: "dsa", 73: "ec", 105: "ed25519", 106: "x25519", 2_147_483_649: "aes",
        14: "des", 17: "3des", 23: "rc2", 25: "rc4", 56: "cast"
    ]

    /// kSecAttrCertificateType values (CSSM_CERT_TYPE).
    package static let certificateTypes: [Int: String] = [
        1: "x509v1", 2: "x509v2", 3: "x509v3", 4: "pgp", 5: "spki", 6: "sdsiv1", 8: "intel",
        9: "x509-attribute", 10: "x9-attribute", 11: "tuple", 12: "acl-entry"
    ]

    /// kSecAttrCertificateEncoding values (CSSM_CERT_ENCODING).
    package static let certificateEncodings: [Int: String] = [
        1: "custom", 2: "ber", 3: "der", 4: "ndr", 5: "sexpr", 6: "pgp"
    ]

    /// The name of a coded value of the attribute printed as `name` in an item of class
    /// `className` (kc's class names), or nil when the attribute is not coded or kc has no
    /// name for this code.
    package static func name(of value: Any, attribute name: String, className: String) -> String? {
        switch name {
        case "accessible":
            return (value as? String).flatMap { accessibility[$0] }
        case "protocol":
            return fourCharacters(value).flatMap { FourCC.scheme(forProtocol: $0) }
        case "auth-type":
            guard let code = fourCharacters(value) else { return nil }
            return FourCC.authTypes.filter { $0.value == code }.map(\.key).min()
        case "key-class":
            return number(value).flatMap { keyClasses[$0] }
        case "type" where className == "key":
            return number(value).flatMap { keyTypes[$0] }
        case "certificate-type":
            return number(value).flatMap { certificateTypes[$0] }
        case "certificate-encoding":
            return number(value).flatMap { certificateEncodings[$0] }
        case "access-control":
            // `user-presence`, or each flag's name joined by commas (`biometry-any,or`).
            guard let n = number(value) else { return nil }
            let names = AccessControlFlags(stored: .int(Int64(n))).names
            return names.isEmpty ? "none" : names.joined(separator: ",")
        default:
            return nil
        }
    }

    /// A number, stored as one or as its decimal text (`kSecAttrKeyClassPrivate` is "1").
    private static func number(_ value: Any) -> Int? {
        if let n = value as? Int { return n }
        if let s = value as? String { return Int(s) }
        return nil
    }

    /// A four-character code, stored as text ("htps") or as Apple's big-endian number.
    private static func fourCharacters(_ value: Any) -> String? {
        if let s = value as? String { return s.utf8.count == 4 ? s : nil }
        guard let n = value as? Int, n > 0xFFFFFF, n <= 0xFFFF_FFFF else { return nil }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: n >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
