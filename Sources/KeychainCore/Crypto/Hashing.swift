internal import CSodium

/// Keyed and unkeyed BLAKE2b (`crypto_generichash`), used for blind indexes, the header MAC,
/// the row accumulator and the associated data's index digest (`docs/format.md` §4).
package enum Hashing {
    /// BLAKE2b of `input` with an optional 32-byte key, `length` bytes out (16–64).
    package static func blake2b(_ input: [UInt8], key: UnsafeRawBufferPointer? = nil, length: Int = 32) -> [UInt8] {
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
    package static func mac(_ input: [UInt8], key: SymmetricKey, length: Int = 32) -> [UInt8] {
        key.withBytes { blake2b(input, key: $0, length: length) }
    }

    /// SipHash-2-4 (`crypto_shorthash`) of `tag ‖ u64 number ‖ bytes` under a 16-byte key:
    /// a cheap keyed 64-bit value for folding many small entries (`IndexFold`).
    static func shortHash(tag: UInt8, number: Int64, bytes: UnsafeRawBufferPointer, key: [UInt8]) -> UInt64 {
        precondition(key.count == Int(crypto_shorthash_KEYBYTES))
        let length = 9 + bytes.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            buffer[0] = tag
            var n = UInt64(bitPattern: number)
            for i in 0..<8 { buffer[8 - i] = UInt8(truncatingIfNeeded: n); n >>= 8 }
            for (i, b) in bytes.enumerated() { buffer[9 + i] = b }
            var out: UInt64 = 0
            withUnsafeMutableBytes(of: &out) { o in
                key.withUnsafeBufferPointer { k in
                    _ = crypto_shorthash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.baseAddress!, UInt64(length), k.baseAddress!)
                }
            }
            return out
        }
    }
}
