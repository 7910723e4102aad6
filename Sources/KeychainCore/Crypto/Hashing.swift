internal import CSodium

/// Keyed and unkeyed BLAKE2b (`crypto_generichash`), used for blind indexes, the header MAC,
/// the row accumulator and the associated data's index digest (`docs/format.md` §4).
enum Hashing {
    /// BLAKE2b of `input` with an optional 32-byte key, `length` bytes out (16–64).
    static func blake2b(_ input: [UInt8], key: UnsafeRawBufferPointer? = nil, length: Int = 32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        out.withUnsafeMutableBytes { o in
            input.withUnsafeBytes { i in
                _ = crypto_generichash(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), length,
                    i.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                    key?.baseAddress?.assumingMemoryBound(to: UInt8.self), key?.count ?? 0)
            }
        }
        return out
    }

    /// Keyed BLAKE2b with a `SymmetricKey`.
    static func mac(_ input: [UInt8], key: SymmetricKey, length: Int = 32) -> [UInt8] {
        key.withBytes { blake2b(input, key: $0, length: length) }
    }
}
