internal import CSodium

/// HMAC (RFC 2104) with SHA-1, SHA-256 or SHA-512: the keyed hash of one-time codes
/// (RFC 4226 §5.2, RFC 6238 §1.2). SHA-256 and SHA-512 are libsodium's
/// `crypto_auth_hmacsha256` / `crypto_auth_hmacsha512` (any key length); SHA-1, which
/// libsodium lacks, is RFC 2104's construction over `SHA1`.
///
///     let mac = HMAC.authenticate(Array("message".utf8), key: seed, algorithm: .sha1)
///
/// See https://doc.libsodium.org/advanced/hmac-sha2 and RFC 2104 §2.
package enum HMAC {
    /// The hash function under the HMAC, named as `otpauth://` URIs name it.
    package enum Algorithm: String, CaseIterable, Sendable {
        /// HMAC-SHA-1 (RFC 2104 over `SHA1`): the RFCs' and most sites' choice.
        case sha1 = "SHA1"
        /// HMAC-SHA-256 (libsodium).
        case sha256 = "SHA256"
        /// HMAC-SHA-512 (libsodium).
        case sha512 = "SHA512"

        /// The MAC's length in bytes.
        package var length: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        }
    }

    /// The MAC of `message` under `key` (any length, empty included). Copies of the key
    /// made here are wiped before returning.
    package static func authenticate(_ message: [UInt8], key: [UInt8], algorithm: Algorithm) -> [UInt8] {
        switch algorithm {
        case .sha1: return sha1(message, key: key)
        case .sha256:
            return sodium(
                message, key: key, state: crypto_auth_hmacsha256_state(), bytes: Int(crypto_auth_hmacsha256_BYTES),
                start: crypto_auth_hmacsha256_init, update: crypto_auth_hmacsha256_update, finish: crypto_auth_hmacsha256_final)
        case .sha512:
            return sodium(
                message, key: key, state: crypto_auth_hmacsha512_state(), bytes: Int(crypto_auth_hmacsha512_BYTES),
                start: crypto_auth_hmacsha512_init, update: crypto_auth_hmacsha512_update, finish: crypto_auth_hmacsha512_final)
        }
    }

    /// libsodium's HMAC of one hash (its state type and its three calls), the state wiped after.
    private static func sodium<State>(
        _ message: [UInt8], key: [UInt8], state initial: State, bytes: Int,
        start: (UnsafeMutablePointer<State>, UnsafePointer<UInt8>, Int) -> Int32,
        update: (UnsafeMutablePointer<State>, UnsafePointer<UInt8>, UInt64) -> Int32,
        finish: (UnsafeMutablePointer<State>, UnsafeMutablePointer<UInt8>) -> Int32
    ) -> [UInt8] {
        var state = initial
        var out = [UInt8](repeating: 0, count: bytes)
        // An empty key still needs a valid pointer (its length, 0, is what counts).
        (key.isEmpty ? [0] : key).withUnsafeBufferPointer {
            if let base = $0.baseAddress { _ = start(&state, base, key.count) }
        }
        message.withUnsafeBufferPointer {
            if let base = $0.baseAddress { _ = update(&state, base, UInt64($0.count)) }
        }
        out.withUnsafeMutableBufferPointer {
            if let base = $0.baseAddress { _ = finish(&state, base) }
        }
        withUnsafeMutableBytes(of: &state) { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
        return out
    }

    /// RFC 2104 over SHA-1: H((K ^ opad) || H((K ^ ipad) || message)), block size 64.
    private static func sha1(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = [UInt8](repeating: 0, count: blockSize)
        var short = key.count > blockSize ? SHA1.hash(key) : key
        for i in short.indices { block[i] = short[i] }
        Sodium.wipe(&short)
        var inner: [UInt8] = []
        inner.reserveCapacity(blockSize + message.count)
        var outer: [UInt8] = []
        outer.reserveCapacity(blockSize + 20)
        for byte in block {
            inner.append(byte ^ 0x36)
            outer.append(byte ^ 0x5C)
        }
        inner += message
        var innerHash = SHA1.hash(inner)
        outer += innerHash
        let mac = SHA1.hash(outer)
        Sodium.wipe(&block)
        Sodium.wipe(&inner)
        Sodium.wipe(&outer)
        Sodium.wipe(&innerHash)
        return mac
    }
}
