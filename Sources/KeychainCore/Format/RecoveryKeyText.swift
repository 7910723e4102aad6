/// A recovery key as the user reads and types it (`docs/format.md` §2.2): its 32 bytes in
/// modhex (the alphabet `cbdefghijklnrtuv`, each byte high nibble first, as
/// systemd-cryptenroll prints its recovery keys), 64 characters in 8 groups of 8 joined by
/// dashes. Read back with or without the dashes, with spaces, in either case.
public enum RecoveryKeyText {
    /// The modhex alphabet: the letters of a Yubikey's, which read the same on every
    /// keyboard layout.
    static let alphabet: [UInt8] = Array("cbdefghijklnrtuv".utf8)

    /// The 71 characters of `key` (32 bytes): 8 groups of 8 modhex characters and dashes.
    public static func format(_ key: borrowing SecureBytes) throws -> SecureBytes {
        guard key.count == 32 else { throw KeychainError(errSecParam, "a recovery key is 32 bytes") }
        let text = try SecureBytes(count: 71)
        key.withUnsafeBytes { k in
            text.withUnsafeMutableBytes { out in
                var j = 0
                for (i, byte) in k.enumerated() {
                    if i > 0 && i % 4 == 0 {
                        out[j] = UInt8(ascii: "-")
                        j += 1
                    }
                    out[j] = alphabet[Int(byte >> 4)]
                    out[j + 1] = alphabet[Int(byte & 0xF)]
                    j += 2
                }
            }
        }
        return text
    }

    /// The 32 bytes of a typed recovery key: dashes, spaces, tabs and newlines are
    /// skipped, letters taken in either case.
    /// - Throws: errSecParam when what is left is not 64 modhex characters (the message
    ///   names the alphabet, never the text).
    public static func parse(_ text: borrowing SecureBytes) throws -> SecureBytes {
        let key = try SecureBytes(count: 32, guarded: true)
        let ok: Bool = text.withUnsafeBytes { t in
            key.withUnsafeMutableBytes { out in
                var nibbles = 0
                for c in t {
                    if c == UInt8(ascii: "-") || c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") {
                        continue
                    }
                    let lower = (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) ? c + 32 : c
                    guard let v = alphabet.firstIndex(of: lower), nibbles < 64 else { return false }
                    if nibbles % 2 == 0 {
                        out[nibbles / 2] = UInt8(v) << 4
                    } else {
                        out[nibbles / 2] |= UInt8(v)
                    }
                    nibbles += 1
                }
                return nibbles == 64
            }
        }
        guard ok else {
            throw KeychainError(
                errSecParam, "that is not a recovery key: a recovery key is 64 letters of cbdefghijklnrtuv (8 groups of 8, dashes and spaces optional)",
                hint: "type it as `kc keyslot add --recovery` printed it")
        }
        return key
    }
}
