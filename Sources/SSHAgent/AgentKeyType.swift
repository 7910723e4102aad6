/// The key types the agent signs with (draft-miller-ssh-agent §4.2.3): Ed25519, ECDSA on
/// P-256 and P-384, RSA. Certificates, security keys and DSA are refused.
public enum AgentKeyType: String, Sendable, CaseIterable {
    case ed25519 = "ssh-ed25519"
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    case ecdsaP384 = "ecdsa-sha2-nistp384"
    case rsa = "ssh-rsa"

    /// The key type named in a key blob, or nil for one the agent does not handle.
    public init?(name: [UInt8]) {
        guard let text = String(validating: name, as: UTF8.self), let type = AgentKeyType(rawValue: text) else { return nil }
        self = type
    }

    /// The curve's name inside an ECDSA key (RFC 5656 §3.1), nil for other types.
    var curveName: String? {
        switch self {
        case .ecdsaP256: "nistp256"
        case .ecdsaP384: "nistp384"
        default: nil
        }
    }

    /// The curve's name for libcrypto, nil for other types.
    var openSSLGroup: String? {
        switch self {
        case .ecdsaP256: "P-256"
        case .ecdsaP384: "P-384"
        default: nil
        }
    }

    /// The bytes of a scalar on the curve.
    var scalarBytes: Int {
        switch self {
        case .ecdsaP256: 32
        case .ecdsaP384: 48
        default: 0
        }
    }
}
