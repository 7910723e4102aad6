internal import COpenSSL
import KeychainCore

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` session of the Secret Service specification
/// (0.2, "Transfer of Secrets"), with OpenSSL's libcrypto for the group arithmetic, HMAC and
/// AES (linked into the provider only):
///
/// - Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (Oakley group 2), generator 2;
///   public values are unsigned big-endian integers, ours padded to 128 bytes.
/// - The shared secret, left-padded to 128 bytes, goes through HKDF-SHA256 with no salt and
///   empty info; the first 16 bytes are the AES-128 key. (KWallet once failed with
///   libsecret for padding it otherwise: docs/secret-service.md.)
/// - Each secret is AES-128-CBC with PKCS#7 padding under a fresh random 16-byte IV, sent
///   as the secret's `parameters`.
package final class SessionCipher {
    /// Our public value for the client (128 bytes).
    package let publicKey: [UInt8]
    private var key: [UInt8]

    /// Answers the client's public value. - Throws: InvalidArgs when it is not a valid
    /// element of the group (0, 1, p − 1 or anything ≥ p would fix the shared secret).
    package init(clientPublicKey: [UInt8]) throws(BusError) {
        guard !clientPublicKey.isEmpty, clientPublicKey.count <= 128 else {
            throw .invalidArgs("the client's public key is not a 1024-bit number")
        }
        guard let ctx = BN_CTX_new() else { throw .failed("out of memory") }
        defer { BN_CTX_free(ctx) }
        guard let p = BN_get_rfc2409_prime_1024(nil), let g = BN_new(), let mine = BN_secure_new(), let ours = BN_new(),
            let theirs = BN_bin2bn(clientPublicKey, Int32(clientPublicKey.count), nil), let shared = BN_secure_new(),
            let limit = BN_new()
        else {
            throw .failed("out of memory")
        }
        defer { BN_free(p); BN_free(g); BN_clear_free(mine); BN_free(ours); BN_free(theirs); BN_clear_free(shared); BN_free(limit) }
        // 1 < theirs < p − 1.
        guard BN_set_word(g, 2) == 1, BN_copy(limit, p) != nil, BN_sub_word(limit, 1) == 1,
            BN_cmp(theirs, BN_value_one()) > 0, BN_cmp(theirs, limit) < 0
        else {
            throw .invalidArgs("the client's public key is not a valid Diffie-Hellman value")
        }
        // A private exponent of 1023 random bits, never 0 or 1.
        guard BN_priv_rand_range(mine, limit) == 1, BN_is_zero(mine) == 0, BN_is_one(mine) == 0,
            BN_mod_exp(ours, g, mine, p, ctx) == 1, BN_mod_exp(shared, theirs, mine, p, ctx) == 1
        else {
            throw .failed("the Diffie-Hellman exchange failed")
        }
        var ourBytes = [UInt8](repeating: 0, count: 128)
        var sharedBytes = [UInt8](repeating: 0, count: 128)
        defer { OPENSSL_cleanse(&sharedBytes, 128) }
        guard BN_bn2binpad(ours, &ourBytes, 128) == 128, BN_bn2binpad(shared, &sharedBytes, 128) == 128 else {
            throw .failed("the Diffie-Hellman exchange failed")
        }
        publicKey = ourBytes
        key = try Self.hkdf(sharedBytes, length: 16)
    }

    deinit { OPENSSL_cleanse(&key, key.count) }

    /// HKDF-SHA256 (RFC 5869) with a salt of zeros (no salt) and empty info.
    static func hkdf(_ ikm: [UInt8], length: Int) throws(BusError) -> [UInt8] {
        var prk = [UInt8](repeating: 0, count: 32)
        defer { OPENSSL_cleanse(&prk, 32) }
        let salt = [UInt8](repeating: 0, count: 32)
        var n: UInt32 = 0
        guard HMAC(EVP_sha256(), salt, 32, ikm, ikm.count, &prk, &n) != nil, n == 32 else { throw .failed("HKDF failed") }
        var okm = [UInt8](repeating: 0, count: 32)
        let block: [UInt8] = [1]   // T(1) = HMAC(PRK, info ‖ 0x01), info empty
        guard HMAC(EVP_sha256(), prk, 32, block, 1, &okm, &n) != nil, n == 32 else { throw .failed("HKDF failed") }
        let out = Array(okm[0..<length])
        OPENSSL_cleanse(&okm, 32)
        return out
    }

    /// `plaintext` sealed for the client: (IV, ciphertext).
    package func encrypt(_ plaintext: [UInt8]) throws(BusError) -> (parameters: [UInt8], value: [UInt8]) {
        var iv = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&iv, 16) == 1 else { throw .failed("no randomness") }
        return (iv, try crypt(plaintext, iv: iv, encrypt: true))
    }

    /// A secret the client sealed. - Throws: InvalidArgs for a wrong IV, length or padding.
    package func decrypt(parameters: [UInt8], value: [UInt8]) throws(BusError) -> [UInt8] {
        guard parameters.count == 16 else { throw .invalidArgs("the secret's parameters must be a 16-byte IV") }
        guard !value.isEmpty, value.count % 16 == 0 else { throw .invalidArgs("the encrypted secret has a wrong length") }
        return try crypt(value, iv: parameters, encrypt: false)
    }

    private func crypt(_ input: [UInt8], iv: [UInt8], encrypt: Bool) throws(BusError) -> [UInt8] {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .failed("out of memory") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_CipherInit_ex(ctx, EVP_aes_128_cbc(), nil, key, iv, encrypt ? 1 : 0) == 1 else { throw .failed("AES failed") }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var n: Int32 = 0, tail: Int32 = 0
        guard EVP_CipherUpdate(ctx, &out, &n, input, Int32(input.count)) == 1 else {
            OPENSSL_cleanse(&out, out.count)
            throw .invalidArgs("the secret could not be decrypted")
        }
        var last = [UInt8](repeating: 0, count: 16)
        let ok = EVP_CipherFinal_ex(ctx, &last, &tail)
        defer { OPENSSL_cleanse(&last, 16) }
        guard ok == 1, Int(n + tail) <= out.count else {
            OPENSSL_cleanse(&out, out.count)
            throw .invalidArgs("the secret could not be decrypted (wrong key or padding)")
        }
        for i in 0..<Int(tail) { out[Int(n) + i] = last[i] }
        let result = Array(out[0..<Int(n + tail)])
        OPENSSL_cleanse(&out, out.count)
        return result
    }
}
