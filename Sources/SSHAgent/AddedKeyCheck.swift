internal import COpenSSL

// OpenSSL 3's selection of a key pair for EVP_PKEY_fromdata (the macro is not imported).
private let selectKeyPair: Int32 = 0x87

/// Checks a key `ssh-add` gives the agent before it is held, as OpenSSH's agent does when
/// it parses one: an ECDSA public point that is not on its curve, or a private half that
/// is not the public half's (ECDSA d, RSA's d, p, q and iqmp, an Ed25519 seed), is refused
/// with SSH_AGENT_FAILURE. Without it such a key is listed, and OpenSSH's clients reject
/// the whole listing ("invalid format"), so every key, keychain keys too, would be unusable.
extension SigningKey {
    /// Most keys `ssh-add` may give one agent; more are refused (FAILURE) until some go.
    public static let maximumHeld = 1024

    /// Throws `SSHSigningError` unless the key's two halves belong together and its public
    /// key is valid (libcrypto's EVP_PKEY_public_check and EVP_PKEY_pairwise_check for
    /// ECDSA and RSA; libsodium's seed → public key for Ed25519).
    public func validate() throws {
        switch type {
        case .ed25519:
            try withFields { reader in
                let a = try reader.string()
                var sk = try reader.string()
                defer { SecretBytes.wipe(&sk) }
                var seed = Array(sk.prefix(32))
                defer { SecretBytes.wipe(&seed) }
                guard sk.count == 64, (try? Ed25519.publicKey(seed: seed)) == a else {
                    throw SSHSigningError("the Ed25519 seed is not the public key's")
                }
            }
        case .ecdsaP256, .ecdsaP384:
            let key = try withFields { reader in
                _ = try reader.string()
                let q = try reader.string()
                var d = try reader.mpint()
                defer { SecretBytes.wipe(&d) }
                return try OpenSSLKey.make(type: "EC", selection: selectKeyPair) { builder in
                    builder.text("group", type.openSSLGroup ?? "") && builder.octets("pub", q) && builder.number("priv", d)
                }
            }
            try Self.check(key)
        case .rsa:
            let key = try withFields { reader in
                let n = try reader.mpint(), e = try reader.mpint()
                var d = try reader.mpint(), iqmp = try reader.mpint(), p = try reader.mpint(), q = try reader.mpint()
                defer { SecretBytes.wipe(&d); SecretBytes.wipe(&iqmp); SecretBytes.wipe(&p); SecretBytes.wipe(&q) }
                var (dp, dq) = try OpenSSLKey.crtExponents(d: d, p: p, q: q)
                defer { SecretBytes.wipe(&dp); SecretBytes.wipe(&dq) }
                return try OpenSSLKey.make(type: "RSA", selection: selectKeyPair) { builder in
                    builder.number("n", n) && builder.number("e", e) && builder.number("d", d)
                        && builder.number("rsa-factor1", p) && builder.number("rsa-factor2", q)
                        && builder.number("rsa-exponent1", dp) && builder.number("rsa-exponent2", dq)
                        && builder.number("rsa-coefficient1", iqmp)
                }
            }
            try Self.check(key)
        }
    }

    private static func check(_ key: OpenSSLKey) throws {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw SSHSigningError("libcrypto: no memory") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check(context) == 1 else { throw SSHSigningError("the public key is not valid") }
        guard EVP_PKEY_pairwise_check(context) == 1 else { throw SSHSigningError("the private key is not the public key's") }
    }
}
