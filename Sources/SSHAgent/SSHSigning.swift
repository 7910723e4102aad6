internal import COpenSSL
internal import CSodium

/// Why a signature was not made or not accepted.
public struct SSHSigningError: Error, Sendable {
    /// What was wrong (never key material).
    public let reason: String
    init(_ reason: String) { self.reason = reason }
}

// OpenSSL 3 selections for EVP_PKEY_fromdata (their macros are not imported): a key pair,
// and a public key (public key, domain and other parameters).
private let selectKeyPair: Int32 = 0x87
private let selectPublicKey: Int32 = 0x86

extension SigningKey {
    /// Signs `data` and returns the signature blob (`string algorithm, string signature`,
    /// draft-miller-ssh-agent §4.5.1). RSA signs with SHA-512 when `flags` has
    /// SSH_AGENT_RSA_SHA2_512, SHA-256 with SSH_AGENT_RSA_SHA2_256, and refuses a request
    /// with neither (a SHA-1 `ssh-rsa` signature): kc never makes one.
    /// - Throws: `SSHSigningError`.
    public func sign(_ data: [UInt8], flags: UInt32) throws -> [UInt8] {
        switch type {
        case .ed25519:
            return try withFields { reader in
                _ = try reader.string()
                var sk = try reader.string()
                defer { SecretBytes.wipe(&sk) }
                var signature = [UInt8](repeating: 0, count: 64)
                guard crypto_sign_detached(&signature, nil, data, UInt64(data.count), sk) == 0 else {
                    throw SSHSigningError("Ed25519 signing failed")
                }
                var blob = SSHWriter()
                blob.text(type.rawValue)
                blob.string(signature)
                return blob.bytes
            }
        case .ecdsaP256, .ecdsaP384:
            return try withFields { reader in
                _ = try reader.string()
                let q = try reader.string()
                var d = try reader.mpint()
                defer { SecretBytes.wipe(&d) }
                let key = try OpenSSLKey.make(type: "EC", selection: selectKeyPair) { builder in
                    builder.text("group", type.openSSLGroup ?? "") && builder.octets("pub", q) && builder.number("priv", d)
                }
                let der = try key.sign(data, digest: type == .ecdsaP256 ? EVP_sha256() : EVP_sha384())
                let (r, s) = try ECDSASignature.decode(der)
                var inner = SSHWriter()
                inner.mpint(r)
                inner.mpint(s)
                var blob = SSHWriter()
                blob.text(type.rawValue)
                blob.string(inner.bytes)
                return blob.bytes
            }
        case .rsa:
            let sha512 = flags & SSHAgentMessage.rsaSHA512 != 0
            guard sha512 || flags & SSHAgentMessage.rsaSHA256 != 0 else {
                throw SSHSigningError("an RSA signature with SHA-1 (ssh-rsa) was asked for; kc signs only rsa-sha2-256 and rsa-sha2-512")
            }
            return try withFields { reader in
                let n = try reader.mpint(), e = try reader.mpint()
                var d = try reader.mpint(), iqmp = try reader.mpint(), p = try reader.mpint(), q = try reader.mpint()
                defer { SecretBytes.wipe(&d); SecretBytes.wipe(&iqmp); SecretBytes.wipe(&p); SecretBytes.wipe(&q) }
                var (dp, dq) = try OpenSSLKey.crtExponents(d: d, p: p, q: q)
                defer { SecretBytes.wipe(&dp); SecretBytes.wipe(&dq) }
                let key = try OpenSSLKey.make(type: "RSA", selection: selectKeyPair) { builder in
                    builder.number("n", n) && builder.number("e", e) && builder.number("d", d)
                        && builder.number("rsa-factor1", p) && builder.number("rsa-factor2", q)
                        && builder.number("rsa-exponent1", dp) && builder.number("rsa-exponent2", dq)
                        && builder.number("rsa-coefficient1", iqmp)
                }
                let signature = try key.sign(data, digest: sha512 ? EVP_sha512() : EVP_sha256())
                var blob = SSHWriter()
                blob.text(sha512 ? "rsa-sha2-512" : "rsa-sha2-256")
                // As long as the modulus (RFC 8332 §3): OpenSSL's output already is.
                blob.string(signature)
                return blob.bytes
            }
        }
    }
}

/// An EVP_PKEY made from its fields, freed with the value.
final class OpenSSLKey {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// A key of `type` ("EC", "RSA") from the parameters `fill` pushes.
    static func make(type: String, selection: Int32, _ fill: (ParamBuilder) -> Bool) throws -> OpenSSLKey {
        guard let builder = ParamBuilder() else { throw SSHSigningError("libcrypto: no memory") }
        guard fill(builder), let params = builder.parameters() else { throw SSHSigningError("libcrypto refused the key's fields") }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw SSHSigningError("libcrypto has no \(type)") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, selection, params) == 1, let key else {
            throw SSHSigningError("libcrypto refused the \(type) key")
        }
        return OpenSSLKey(key)
    }

    /// d mod (p-1) and d mod (q-1), the CRT exponents an OpenSSH key does not carry.
    static func crtExponents(d: [UInt8], p: [UInt8], q: [UInt8]) throws -> ([UInt8], [UInt8]) {
        guard let context = BN_CTX_secure_new() else { throw SSHSigningError("libcrypto: no memory") }
        defer { BN_CTX_free(context) }
        func reduce(_ prime: [UInt8]) throws -> [UInt8] {
            guard let bd = BN_bin2bn(d, Int32(d.count), nil), let bp = BN_bin2bn(prime, Int32(prime.count), nil), let r = BN_new() else {
                throw SSHSigningError("libcrypto: no memory")
            }
            defer { BN_clear_free(bd); BN_clear_free(bp); BN_clear_free(r) }
            guard BN_sub_word(bp, 1) == 1, BN_div(nil, r, bd, bp, context) == 1 else { throw SSHSigningError("libcrypto: bad RSA factors") }
            var out = [UInt8](repeating: 0, count: Int((BN_num_bits(r) + 7) / 8))
            _ = BN_bn2bin(r, &out)
            return out
        }
        return (try reduce(p), try reduce(q))
    }

    /// Signs `data` with `digest` (DER for ECDSA, PKCS #1 v1.5 for RSA).
    func sign(_ data: [UInt8], digest: OpaquePointer?) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw SSHSigningError("libcrypto: no memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest, nil, pointer) == 1 else { throw SSHSigningError("libcrypto: cannot sign") }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, data, data.count) == 1 else { throw SSHSigningError("libcrypto: cannot sign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { throw SSHSigningError("libcrypto: signing failed") }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is `digest`'s signature of `data` under this public key.
    func verify(_ signature: [UInt8], of data: [UInt8], digest: OpaquePointer?) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, digest, nil, pointer) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }

    /// A public key from a key blob's fields.
    static func publicKey(type: AgentKeyType, reader: inout SSHReader) throws -> OpenSSLKey {
        switch type {
        case .ecdsaP256, .ecdsaP384:
            guard try reader.text() == type.curveName else { throw SSHSigningError("curve mismatch") }
            let q = try reader.string()
            return try make(type: "EC", selection: selectPublicKey) { builder in
                builder.text("group", type.openSSLGroup ?? "") && builder.octets("pub", q)
            }
        case .rsa:
            let e = try reader.mpint(), n = try reader.mpint()
            guard n.count * 8 >= 1024 else { throw SSHSigningError("RSA key too small") }
            return try make(type: "RSA", selection: selectPublicKey) { builder in
                builder.number("n", n) && builder.number("e", e)
            }
        case .ed25519:
            throw SSHSigningError("not an OpenSSL key type")
        }
    }
}

/// OSSL_PARAM_BLD keeps pointers to the names, strings, buffers and BIGNUMs pushed until
/// its parameters are made: this owns copies of them until then, and clears the numbers
/// and buffers (key material) when it goes.
final class ParamBuilder {
    private let builder: OpaquePointer
    private var numbers: [OpaquePointer] = []
    private var buffers: [(UnsafeMutableRawPointer, Int)] = []

    init?() {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        self.builder = builder
    }

    deinit {
        OSSL_PARAM_BLD_free(builder)
        for bn in numbers { BN_clear_free(bn) }
        for (pointer, count) in buffers {
            sodium_memzero(pointer, count)
            free(pointer)
        }
    }

    /// A copy of `bytes` (NUL-terminated) that lives as long as this builder.
    private func keep(_ bytes: [UInt8]) -> UnsafeMutableRawPointer? {
        guard let pointer = malloc(bytes.count + 1) else { return nil }
        let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: bytes.count + 1)
        buffer.copyBytes(from: bytes + [0])
        buffers.append((pointer, bytes.count + 1))
        return pointer
    }

    private func name(_ key: String) -> UnsafePointer<CChar>? {
        keep(Array(key.utf8)).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
    }

    /// A UTF-8 string parameter.
    func text(_ key: String, _ value: String) -> Bool {
        guard let k = name(key), let v = keep(Array(value.utf8)) else { return false }
        return OSSL_PARAM_BLD_push_utf8_string(builder, k, v.assumingMemoryBound(to: CChar.self), 0) == 1
    }

    /// An octet string parameter.
    func octets(_ key: String, _ value: [UInt8]) -> Bool {
        guard let k = name(key), let v = keep(value) else { return false }
        return OSSL_PARAM_BLD_push_octet_string(builder, k, v, value.count) == 1
    }

    /// A BIGNUM parameter from a big-endian magnitude.
    func number(_ key: String, _ magnitude: [UInt8]) -> Bool {
        guard let k = name(key), let bn = BN_bin2bn(magnitude, Int32(magnitude.count), nil) else { return false }
        numbers.append(bn)
        return OSSL_PARAM_BLD_push_BN(builder, k, bn) == 1
    }

    /// The parameters (the caller frees them with OSSL_PARAM_free).
    func parameters() -> UnsafeMutablePointer<OSSL_PARAM>? {
        OSSL_PARAM_BLD_to_param(builder)
    }
}

/// ECDSA signatures between DER (libcrypto) and SSH's `mpint r, mpint s` (RFC 5656 §3.1.2).
enum ECDSASignature {
    /// r and s from a DER ECDSA-Sig-Value.
    static func decode(_ der: [UInt8]) throws -> ([UInt8], [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SSHSigningError("libcrypto gave a malformed ECDSA signature") }
        defer { ECDSA_SIG_free(parsed) }
        func bytes(_ bn: OpaquePointer?) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
            _ = BN_bn2bin(bn, &out)
            return out
        }
        return (bytes(ECDSA_SIG_get0_r(parsed)), bytes(ECDSA_SIG_get0_s(parsed)))
    }

    /// DER from r and s.
    static func encode(r: [UInt8], s: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        guard let br = BN_bin2bn(r, Int32(r.count), nil), let bs = BN_bin2bn(s, Int32(s.count), nil) else { return nil }
        guard ECDSA_SIG_set0(sig, br, bs) == 1 else {
            BN_free(br)
            BN_free(bs)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        return written == length ? out : nil
    }
}

/// Checks a signature made by a public key (the host key's signature of the session
/// identifier in `session-bind@openssh.com`).
public enum SSHSignatureCheck {
    /// Whether `signature` (`string algorithm, string signature`) is `publicBlob`'s
    /// signature of `data`. RSA only with rsa-sha2-256 or -512.
    public static func verify(publicBlob: [UInt8], signature: [UInt8], data: [UInt8]) -> Bool {
        do {
            var key = SSHReader(publicBlob)
            guard let type = AgentKeyType(name: try key.string()) else { return false }
            var sig = SSHReader(signature)
            let algorithm = try sig.text()
            let value = try sig.string()
            guard sig.isAtEnd else { return false }
            switch type {
            case .ed25519:
                let a = try key.string()
                guard key.isAtEnd, algorithm == type.rawValue, a.count == 32, value.count == 64 else { return false }
                return crypto_sign_verify_detached(value, data, UInt64(data.count), a) == 0
            case .ecdsaP256, .ecdsaP384:
                guard algorithm == type.rawValue else { return false }
                let evp = try OpenSSLKey.publicKey(type: type, reader: &key)
                guard key.isAtEnd else { return false }
                var inner = SSHReader(value)
                let r = try inner.mpint(), s = try inner.mpint()
                guard inner.isAtEnd, let der = ECDSASignature.encode(r: r, s: s) else { return false }
                return evp.verify(der, of: data, digest: type == .ecdsaP256 ? EVP_sha256() : EVP_sha384())
            case .rsa:
                let digest: OpaquePointer?
                switch algorithm {
                case "rsa-sha2-256": digest = EVP_sha256()
                case "rsa-sha2-512": digest = EVP_sha512()
                default: return false
                }
                let evp = try OpenSSLKey.publicKey(type: type, reader: &key)
                guard key.isAtEnd else { return false }
                return evp.verify(value, of: data, digest: digest)
            }
        } catch {
            return false
        }
    }
}
