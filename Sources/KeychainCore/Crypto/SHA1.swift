/// SHA-1 (FIPS 180-4), implemented in pure Swift over `[UInt8]`.
///
/// This exists only because Apple's keychain uses SHA-1 digests as
/// *identifiers*: `kSecAttrPublicKeyHash` (a certificate's public-key hash)
/// and `kSecAttrApplicationLabel` (a key's label) are SHA-1 values that must
/// be reproduced exactly to match what macOS/iOS store. Its one other use is
/// HMAC-SHA-1 (`HMAC`) for one-time codes, because RFC 4226 / RFC 6238 and
/// nearly every site's `otpauth://` URI require it (HMAC-SHA-1 is still a
/// sound PRF; SHA-1's collision attacks do not apply). Nothing of kc's own
/// integrity, authentication or key derivation uses it.
enum SHA1 {
    /// Returns the 20-byte SHA-1 digest of `bytes`.
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var h0: UInt32 = 0x6745_2301
        var h1: UInt32 = 0xEFCD_AB89
        var h2: UInt32 = 0x98BA_DCFE
        var h3: UInt32 = 0x1032_5476
        var h4: UInt32 = 0xC3D2_E1F0

        // Padding: 0x80, zeros up to 56 mod 64, then the bit length (big-endian, 64 bits).
        var message = bytes
        let bitLength = UInt64(truncatingIfNeeded: bytes.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 {
            message.append(0)
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        var w = [UInt32](repeating: 0, count: 80)
        // HMAC-SHA-1 hashes key material: leave none of it in the copies made here.
        defer {
            Sodium.wipe(&message)
            w.withUnsafeMutableBytes { buffer in
                for i in buffer.indices { buffer[i] = 0 }
            }
        }
        var blockStart = 0
        while blockStart < message.count {
            for t in 0..<16 {
                let i = blockStart + t * 4
                w[t] =
                    UInt32(message[i]) << 24
                    | UInt32(message[i + 1]) << 16
                    | UInt32(message[i + 2]) << 8
                    | UInt32(message[i + 3])
            }
            for t in 16..<80 {
                w[t] = rotateLeft(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)
            }

            var a = h0, b = h1, c = h2, d = h3, e = h4
            for t in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch t {
                case 0..<20:
                    f = (b & c) | (~b & d)
                    k = 0x5A82_7999
                case 20..<40:
                    f = b ^ c ^ d
                    k = 0x6ED9_EBA1
                case 40..<60:
                    f = (b & c) | (b & d) | (c & d)
                    k = 0x8F1B_BCDC
                default:
                    f = b ^ c ^ d
                    k = 0xCA62_C1D6
                }
                let temp = rotateLeft(a, 5) &+ f &+ e &+ k &+ w[t]
                e = d
                d = c
                c = rotateLeft(b, 30)
                b = a
                a = temp
            }
            h0 = h0 &+ a
            h1 = h1 &+ b
            h2 = h2 &+ c
            h3 = h3 &+ d
            h4 = h4 &+ e
            blockStart += 64
        }

        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [h0, h1, h2, h3, h4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    @inline(__always)
    private static func rotateLeft(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x << n) | (x >> (32 - n))
    }
}
