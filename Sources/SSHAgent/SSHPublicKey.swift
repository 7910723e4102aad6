import KeychainCore
internal import CSodium

/// Public SSH keys as people and OpenSSH write them: the `TYPE BASE64 COMMENT` line of
/// `ssh-add -L` and `authorized_keys`, and the `SHA256:…` fingerprint of `ssh-keygen -l`.
public enum SSHPublicKey {
    /// `TYPE BASE64 COMMENT` (no comment: `TYPE BASE64`); the type is read from the blob.
    public static func line(blob: [UInt8], comment: String) -> String {
        var reader = SSHWireReader(blob)
        let type = (try? reader.text()) ?? "unknown"
        let base = type + " " + base64(blob)
        return comment.isEmpty ? base : base + " " + comment
    }

    /// The SHA-256 fingerprint as `ssh-keygen -l` prints it: `SHA256:` and the unpadded
    /// base64 of the blob's SHA-256.
    public static func fingerprint(_ blob: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&digest, blob, UInt64(blob.count))
        return "SHA256:" + base64(digest, padded: false)
    }

    /// Standard base64 (RFC 4648 §4).
    public static func base64(_ bytes: [UInt8], padded: Bool = true) -> String {
        let variant = padded ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING
        let length = sodium_base64_encoded_len(bytes.count, variant)
        var out = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&out, length, bytes, bytes.count, variant)
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of standard base64 text, whitespace ignored; nil when it is not base64.
    public static func decodeBase64(_ text: some Collection<UInt8>) -> [UInt8]? {
        let clean = text.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 && $0 != 0x09 }
        var out = [UInt8](repeating: 0, count: clean.count / 4 * 3 + 3)
        var length = 0
        let ok = clean.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(&out, out.count, chars.baseAddress, chars.count, nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
            }
        }
        guard ok == 0 else {
            Sodium.wipe(&out)
            return nil
        }
        let result = Array(out[..<length])
        Sodium.wipe(&out)
        return result
    }
}
