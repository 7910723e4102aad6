import KeychainCore
internal import COpenSSL

/// The ciphers of OpenSSH's key files (PROTOCOL.key's `ciphername`) kc reads, through
/// libcrypto's EVP: AES-CTR, and AES-GCM whose 16-byte tag follows the encrypted section.
enum KeyFileCipher: String {
    case none = "none"
    case aes256ctr = "aes256-ctr"
    case aes192ctr = "aes192-ctr"
    case aes128ctr = "aes128-ctr"
    case aes256gcm = "aes256-gcm@openssh.com"
    case aes128gcm = "aes128-gcm@openssh.com"

    /// The cipher a key file names. - Throws: errSecParam for another (a DES or CBC file: the
    /// hint says how to rewrite it).
    init(name: String) throws {
        guard let cipher = KeyFileCipher(rawValue: name) else {
            throw KeychainError(
                errSecParam, "the key file is encrypted with \(name.count > 40 ? String(name.prefix(40)) + "…" : name), which kc does not read",
                hint: "rewrite it with `ssh-keygen -p -f FILE` (aes256-ctr), then add it")
        }
        self = cipher
    }

    /// Key length in bytes.
    var keyLength: Int {
        switch self {
        case .none: 0
        case .aes128ctr, .aes128gcm: 16
        case .aes192ctr: 24
        case .aes256ctr, .aes256gcm: 32
        }
    }

    /// IV length in bytes.
    var ivLength: Int {
        switch self {
        case .none: 0
        case .aes128ctr, .aes192ctr, .aes256ctr: 16
        case .aes128gcm, .aes256gcm: 12
        }
    }

    /// The block size the private section is padded to.
    var blockSize: Int { self == .none ? 8 : 16 }

    /// The length of the authentication tag after the section.
    var tagLength: Int {
        switch self {
        case .aes128gcm, .aes256gcm: 16
        default: 0
        }
    }

    private var evpName: String {
        switch self {
        case .none: ""
        case .aes128ctr: "AES-128-CTR"
        case .aes192ctr: "AES-192-CTR"
        case .aes256ctr: "AES-256-CTR"
        case .aes128gcm: "AES-128-GCM"
        case .aes256gcm: "AES-256-GCM"
        }
    }

    /// Decrypts the private section with `keyAndIV` (the KDF's output: key, then IV).
    /// - Throws: errSecAuthFailed when a GCM tag does not verify (a wrong passphrase).
    func decrypt(_ section: [UInt8], tag: [UInt8], keyAndIV: [UInt8]) throws -> [UInt8] {
        if self == .none { return section }
        guard keyAndIV.count == keyLength + ivLength, tag.count == tagLength else {
            throw KeychainError(errSecInternalError, "wrong key material for \(rawValue)")
        }
        guard let cipher = EVP_CIPHER_fetch(nil, evpName, nil) else {
            throw KeychainError(errSecInternalError, "libcrypto has no \(evpName)")
        }
        defer { EVP_CIPHER_free(cipher) }
        guard let context = EVP_CIPHER_CTX_new() else { throw KeychainError(errSecAllocate, "libcrypto could not allocate a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        let key = Array(keyAndIV[..<keyLength])
        let iv = Array(keyAndIV[keyLength...])
        var out = [UInt8](repeating: 0, count: section.count + 16)
        var length: Int32 = 0
        var final: Int32 = 0
        var ok = EVP_DecryptInit_ex2(context, cipher, key, iv, nil) == 1
        if ok && tagLength > 0 {
            var tagCopy = tag
            ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tagCopy) == 1
        }
        ok = ok && EVP_DecryptUpdate(context, &out, &length, section, Int32(section.count)) == 1
        let updated = Int(length)
        let finished = ok && out.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress.map { $0 + updated }, &final) } == 1
        guard finished else {
            Sodium.wipe(&out)
            if tagLength > 0 && ok {
                throw KeychainError(
                    errSecAuthFailed, "wrong passphrase for the key file (its authentication tag does not verify)",
                    hint: "type it again, or check --passphrase-file")
            }
            throw KeychainError(errSecDecode, "libcrypto could not decrypt the key file")
        }
        let result = Array(out[..<(updated + Int(final))])
        Sodium.wipe(&out)
        return result
    }
}
