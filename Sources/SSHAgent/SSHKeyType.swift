import KeychainCore
import POSIXSupport

/// The SSH key types kc keeps (docs/ssh.md, "Keys in the keychain"): their wire names,
/// curves and the kSecAttrKeyType a key item of the type carries.
public enum SSHKeyType: String, Sendable, CaseIterable {
    case ed25519 = "ssh-ed25519"
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    case ecdsaP384 = "ecdsa-sha2-nistp384"
    case ecdsaP521 = "ecdsa-sha2-nistp521"
    case rsa = "ssh-rsa"

    /// The smallest RSA modulus kc accepts (keeps, and signs with from `ssh-add`), in bits.
    public static let minimumRSABits = 2048
    /// The largest (OpenSSH's own bound), in bits.
    public static let maximumRSABits = 16384

    /// The type a wire name names. - Throws: errSecParam for any other (DSA, certificates,
    /// security keys), naming it.
    public init(wireName: String) throws {
        guard let type = SSHKeyType(rawValue: wireName) else {
            throw KeychainError(
                errSecParam, "kc does not keep SSH keys of type \("\(TerminalSafe.escaped(wireName))")",
                hint: "kc keeps ssh-ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa (2048 to 16384 bits)")
        }
        self = type
    }

    /// The curve name inside an ECDSA key (`nistp256`…), nil for the others.
    public var curve: String? {
        switch self {
        case .ecdsaP256: "nistp256"
        case .ecdsaP384: "nistp384"
        case .ecdsaP521: "nistp521"
        case .ed25519, .rsa: nil
        }
    }

    /// The curve's name in libcrypto (`P-256`…), nil for the others.
    var groupName: String? {
        switch self {
        case .ecdsaP256: "P-256"
        case .ecdsaP384: "P-384"
        case .ecdsaP521: "P-521"
        case .ed25519, .rsa: nil
        }
    }

    /// The size in bytes of one coordinate and of the private scalar of the curve.
    var fieldBytes: Int {
        switch self {
        case .ecdsaP256: 32
        case .ecdsaP384: 48
        case .ecdsaP521: 66
        case .ed25519: 32
        case .rsa: 0
        }
    }

    /// The ECDSA type of a curve name (`nistp256`…).
    static func ecdsa(curve: String) -> SSHKeyType? {
        allCases.first { $0.curve == curve }
    }

    /// kSecAttrKeyType's value for a key item of this type (Apple's numbers, as kc stores them).
    public var keychainKeyType: Int {
        switch self {
        case .ed25519: Int(kSecAttrKeyTypeEd25519) ?? 105
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: Int(kSecAttrKeyTypeECSECPrimeRandom) ?? 73
        case .rsa: Int(kSecAttrKeyTypeRSA) ?? 42
        }
    }
}
