internal import CSodium

/// ISO/IEC 7816-4 padding to 256-byte blocks (`sodium_pad`), so ciphertext sizes reveal
/// lengths only to the block (`docs/security.md`, "What still leaks").
enum Padding {
    static let blockSize = 256

    /// Copies `plaintext` into a scratch buffer padded to a multiple of the block size.
    static func pad(_ plaintext: UnsafeRawBufferPointer) throws -> SecureBytes {
        let out = try SecureBytes(count: paddedSize(plaintext.count))
        try fill(out, from: plaintext)
        return out
    }

    /// Pads an array's bytes.
    static func pad(_ plaintext: [UInt8]) throws -> SecureBytes {
        let out = try SecureBytes(count: paddedSize(plaintext.count))
        try plaintext.withUnsafeBytes { try fill(out, from: $0) }
        return out
    }

    static func paddedSize(_ count: Int) -> Int {
        (count / blockSize + 1) * blockSize
    }

    private static func fill(_ out: borrowing SecureBytes, from plaintext: UnsafeRawBufferPointer) throws {
        let padded = out.count
        var paddedLength = 0
        let rc = out.withUnsafeMutableBytes { o -> Int32 in
            if let src = plaintext.baseAddress, plaintext.count > 0 {
                o.baseAddress!.copyMemory(from: src, byteCount: plaintext.count)
            }
            return sodium_pad(&paddedLength, o.baseAddress!.assumingMemoryBound(to: UInt8.self), plaintext.count, blockSize, padded)
        }
        guard rc == 0, paddedLength == padded else { throw KeychainError(errSecInternalError, "padding failed") }
    }

    /// The unpadded length of a padded buffer.
    /// - Throws: `errSecDecode` when the padding is malformed.
    static func unpaddedLength(_ padded: borrowing SecureBytes) throws -> Int {
        var length = 0
        let rc = padded.withUnsafeBytes { p -> Int32 in
            guard p.count > 0 else { return -1 }
            return sodium_unpad(&length, p.baseAddress!.assumingMemoryBound(to: UInt8.self), p.count, blockSize)
        }
        guard rc == 0 else { throw KeychainError(errSecDecode, "bad padding in a decrypted item") }
        return length
    }
}
