#if canImport(Glibc)
import Glibc
#endif

/// Standard base64 (RFC 4648, with padding), written into a caller's buffer so that the
/// encoding of a secret can be wiped: Foundation's `base64EncodedString` makes a String.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes `input` into `output`, which holds exactly `(input.count + 2) / 3 * 4` bytes.
    static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        var o = 0
        var i = 0
        while i < input.count {
            let b0 = UInt32(input[i])
            let b1 = i + 1 < input.count ? UInt32(input[i + 1]) : 0
            let b2 = i + 2 < input.count ? UInt32(input[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            output[o] = alphabet[Int(n >> 18 & 63)]
            output[o + 1] = alphabet[Int(n >> 12 & 63)]
            output[o + 2] = i + 1 < input.count ? alphabet[Int(n >> 6 & 63)] : 0x3D
            output[o + 3] = i + 2 < input.count ? alphabet[Int(n & 63)] : 0x3D
            i += 3
            o += 4
        }
    }
}
