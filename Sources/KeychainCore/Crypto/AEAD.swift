internal import CSodium

/// XChaCha20-Poly1305-IETF with a random 24-byte nonce stored before the ciphertext
/// (`docs/format.md` §3): `box = nonce(24) ‖ ciphertext ‖ tag(16)`.
package enum AEAD {
    /// The key's length in bytes.
    package static let keyBytes = 32
    /// The nonce's length in bytes (stored before the ciphertext).
    package static let nonceBytes = 24
    /// The tag's length in bytes (stored after the ciphertext).
    package static let tagBytes = 16

    /// Seals `plaintext` under `key` bound to `ad`.
    package static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, ad: [UInt8]) -> [UInt8] {
        var box = [UInt8](repeating: 0, count: nonceBytes + plaintext.count + tagBytes)
        let nonce = Sodium.randomBytes(nonceBytes)
        box.withUnsafeMutableBytes { out in
            out.baseAddress!.copyMemory(from: nonce, byteCount: nonceBytes)
            key.withBytes { k in
                ad.withUnsafeBytes { a in
                    var written: UInt64 = 0
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        (out.baseAddress! + nonceBytes).assumingMemoryBound(to: UInt8.self), &written,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                        nil,
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return box
    }

    /// Seals a `SecureBytes` plaintext.
    package static func seal(_ plaintext: borrowing SecureBytes, key: SymmetricKey, ad: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, ad: ad) }
    }

    /// Opens a box into scratch secure memory.
    /// - Throws: `errSecDecode` when the box is short, was sealed under another key or
    ///   associated data, or was modified.
    package static func open(_ box: [UInt8], key: SymmetricKey, ad: [UInt8], what: String) throws -> SecureBytes {
        guard box.count >= nonceBytes + tagBytes else {
            throw KeychainError(errSecDecode, "\(what) is truncated: the keychain is damaged or was tampered with")
        }
        let out = try SecureBytes(count: box.count - nonceBytes - tagBytes)
        let rc = out.withUnsafeMutableBytes { o in
            box.withUnsafeBytes { b in
                key.withBytes { k in
                    ad.withUnsafeBytes { a in
                        var written: UInt64 = 0
                        return crypto_aead_xchacha20poly1305_ietf_decrypt(
                            o.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, nil,
                            (b.baseAddress! + nonceBytes).assumingMemoryBound(to: UInt8.self), UInt64(box.count - nonceBytes),
                            a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                            b.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        guard rc == 0 else {
            throw KeychainError(errSecDecode, "\(what) failed to decrypt: the keychain is damaged or was tampered with")
        }
        return out
    }
}
