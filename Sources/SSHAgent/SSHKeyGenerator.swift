import KeychainCore
internal import CSodium
internal import COpenSSL

/// New SSH keys made in this process, straight into the wire form (`SSHPrivateKey`): the
/// private half is never written to a file or handed to another program. Ed25519 through
/// libsodium (`crypto_sign_keypair`); ECDSA and RSA through libcrypto's EVP_PKEY keygen.
public enum SSHKeyGenerator {
    /// The RSA size when none is asked for.
    public static let defaultRSABits = 3072
    /// The largest RSA size kc makes.
    public static let maxRSABits = 16384

    /// A new key of `type`; `bits` is the RSA modulus size (ignored for the others).
    /// - Throws: errSecParam for RSA bits outside 2048-16384 or not a multiple of 8.
    public static func generate(_ type: SSHKeyType, bits: Int = defaultRSABits) throws -> SSHPrivateKey {
        switch type {
        case .ed25519:
            try Sodium.ensureReady()
            var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
            var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
            defer { Sodium.wipe(&sk) }
            guard crypto_sign_keypair(&pk, &sk) == 0 else { throw KeychainError(errSecInternalError, "libsodium could not make a key") }
            var w = SSHWireWriter()
            defer { w.wipe() }
            w.string(type.rawValue)
            w.string(pk)
            w.string(sk)   // libsodium's secret key is the seed k followed by ENC(A), as SSH's
            return try SSHPrivateKey(wire: w.bytes)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            return try libcrypto("EC") { context in
                EVP_PKEY_CTX_set_group_name(context, type.groupName ?? "") == 1
            }
        case .rsa:
            guard (SSHKeyType.minimumRSABits...maxRSABits).contains(bits), bits % 8 == 0 else {
                throw KeychainError(errSecParam, "--bits takes \(SSHKeyType.minimumRSABits) to \(maxRSABits), a multiple of 8 (default \(defaultRSABits))")
            }
            return try libcrypto("RSA") { context in
                EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1
            }
        }
    }

    /// A key made by libcrypto's keygen for `algorithm`, set up by `configure`.
    private static func libcrypto(_ algorithm: String, _ configure: (OpaquePointer) -> Bool) throws -> SSHPrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw KeychainError(errSecInternalError, "libcrypto has no \(algorithm) keys")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context), EVP_PKEY_generate(context, &pkey) == 1, let pkey else {
            throw KeychainError(errSecInternalError, "libcrypto could not make an \(algorithm) key")
        }
        defer { EVP_PKEY_free(pkey) }
        return try LibcryptoKey.wire(of: pkey)
    }
}
