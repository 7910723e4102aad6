import KeychainCore
internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// A PEM private key file (`-----BEGIN RSA PRIVATE KEY-----`, `EC PRIVATE KEY`, PKCS#8's
/// `PRIVATE KEY` and `ENCRYPTED PRIVATE KEY`, and the legacy `Proc-Type: 4,ENCRYPTED`
/// form), as `ssh-keygen -m PEM` and other tools write it, read by libcrypto's PEM API and
/// turned into the SSH wire form (`LibcryptoKey.wire`).
public struct PEMKeyFile {
    private(set) var contents: [UInt8]
    let label: String
    /// Whether reading it needs a passphrase.
    public let isEncrypted: Bool

    init(contents: [UInt8], label: String, body: ArraySlice<UInt8>) {
        self.contents = contents
        self.label = label
        let procType = Array("Proc-Type: 4,ENCRYPTED".utf8)
        isEncrypted =
            label == "ENCRYPTED PRIVATE KEY"
            || body.indices.contains { i in i + procType.count <= body.endIndex && body[i..<(i + procType.count)].elementsEqual(procType) }
    }

    /// Overwrites the file's bytes.
    mutating func wipe() { Sodium.wipe(&contents) }

    /// The private key, decrypted with `passphrase` when the file is encrypted.
    /// - Throws: errSecAuthFailed when an encrypted file does not decrypt with it,
    ///   errSecParam when none is given, errSecDecode when libcrypto cannot read the file.
    public func privateKey(passphrase: [UInt8]?) throws -> SSHPrivateKey {
        if isEncrypted, passphrase?.isEmpty ?? true {
            throw KeychainError(errSecParam, "the key file is encrypted and no passphrase was given")
        }
        // A NUL-terminated copy for libcrypto's callback, wiped after.
        var secret: [CChar] = (passphrase ?? []).map { CChar(bitPattern: $0) } + [0]
        defer { for i in secret.indices { secret[i] = 0 } }
        let pkey: OpaquePointer? = contents.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return secret.withUnsafeMutableBufferPointer { chars in
                // Never libcrypto's default, which would prompt on the terminal itself.
                PEM_read_bio_PrivateKey(
                    bio, nil,
                    { buffer, size, _, context in
                        guard let buffer, let context else { return 0 }
                        let text = context.assumingMemoryBound(to: CChar.self)
                        let length = Int(strlen(text))
                        guard length > 0, length <= Int(size) else { return 0 }
                        memcpy(buffer, text, length)
                        return Int32(length)
                    }, chars.baseAddress)
            }
        }
        ERR_clear_error()
        guard let pkey else {
            if isEncrypted {
                throw KeychainError(
                    errSecAuthFailed, "wrong passphrase for the key file (or the file is damaged)", hint: "type it again, or check --passphrase-file")
            }
            throw KeychainError(errSecDecode, "the key file is malformed: libcrypto cannot read its \(label)")
        }
        defer { EVP_PKEY_free(pkey) }
        return try LibcryptoKey.wire(of: pkey)
    }
}
