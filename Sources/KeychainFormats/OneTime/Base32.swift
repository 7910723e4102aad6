import KeychainCore

/// Base32 (RFC 4648 §6), as one-time-code seeds are written: upper or lower case, with
/// or without `=` padding, spaces anywhere (apps show seeds in groups of four).
///
///     let key = try Base32.decode(Array("JBSW Y3DP EHPK 3PXP".utf8))   // "Hello!\u{DE}\u{AD}\u{BE}\u{EF}"
///
/// Errors name the position of a bad character, never the character or the seed.
package enum Base32 {
    /// The 32 letters, in value order.
    package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Decodes `text`; trailing bits that do not fill a byte are dropped (as Google
    /// Authenticator and oathtool do for seeds whose length is not a multiple of 8).
    /// - Throws: errSecParam for a character outside the alphabet (its 1-based position
    ///   among the characters given), `=` before the end, or no letters at all.
    package static func decode(_ text: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        var letters = 0
        var padding = false
        defer { buffer = 0 }
        for (i, byte) in text.enumerated() {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { continue }
            if byte == UInt8(ascii: "=") { padding = true; continue }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = byte - UInt8(ascii: "2") + 26
            default:
                Sodium.wipe(&out)
                let hint =
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    ? " (base32 has the digits 2-7 only: 0, 1, 8 and 9 are not in it)" : " (base32 is A-Z and 2-7)"
                throw KeychainError(errSecParam, "the secret has a character that is not base32 at position \(i + 1)" + hint)
            }
            guard !padding else {
                Sodium.wipe(&out)
                throw KeychainError(errSecParam, "the secret has base32 letters after its = padding (position \(i + 1))")
            }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            letters += 1
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard !out.isEmpty else {
            throw KeychainError(
                errSecParam,
                letters == 0 ? "the secret is empty" : "the secret is too short (\(letters) base32 letter\(letters == 1 ? "" : "s"), less than one byte)")
        }
        return out
    }

    /// Encodes `bytes` without padding (the form `otpauth://` URIs use).
    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        buffer = 0
        return out
    }
}
