import KeychainCore

/// An OpenSSH private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`, OpenSSH
/// PROTOCOL.key): `"openssh-key-v1\0"`, the cipher and KDF names, the KDF options, the
/// number of keys (kc reads files of one), the public key, and the private section,
/// encrypted with a key and IV from bcrypt_pbkdf when the cipher is not `none`:
///
///     uint32 check, uint32 check, (key type, private fields), string comment, padding 1, 2, 3…
///
/// Every length is checked: a malformed file is errSecDecode, never a crash; a wrong
/// passphrase (the two check words differ, or the GCM tag fails) is errSecAuthFailed.
public struct OpenSSHKeyFile {
    /// The PEM label of the file.
    public static let label = "OPENSSH PRIVATE KEY"
    static let magic = Array("openssh-key-v1".utf8) + [0]

    let cipher: KeyFileCipher
    let salt: [UInt8]
    let rounds: UInt32
    let publicBlob: [UInt8]
    private(set) var section: [UInt8]
    let tag: [UInt8]

    /// Overwrites the private section (the key itself in an unencrypted file).
    mutating func wipe() { Sodium.wipe(&section) }

    /// Whether a passphrase is needed to read the private key.
    public var isEncrypted: Bool { cipher != .none }

    /// The file whose base64 body (between the BEGIN and END lines) decodes to `binary`.
    public init(binary: [UInt8]) throws {
        var r = SSHWireReader(binary, context: "the key file")
        guard try r.raw(min(Self.magic.count, r.remaining)) == Self.magic else { throw r.malformed("it does not start with openssh-key-v1") }
        cipher = try KeyFileCipher(name: r.text())
        let kdf = try r.text()
        var options = SSHWireReader(try r.string(), context: "the key file's KDF options")
        switch (cipher, kdf) {
        case (.none, "none"):
            guard options.isAtEnd else { throw r.malformed("an unencrypted key has KDF options") }
            salt = []
            rounds = 0
        case (.none, _): throw r.malformed("an unencrypted key names the KDF \(kdf)")
        case (_, "bcrypt"):
            salt = try options.string()
            rounds = try options.uint32()
            guard options.isAtEnd, !salt.isEmpty else { throw r.malformed("the bcrypt options are not a salt and a round count") }
            // Checked here, before a passphrase is asked for (BcryptPBKDF checks again).
            guard rounds >= 1, rounds <= BcryptPBKDF.maxRounds else {
                throw KeychainError(
                    errSecParam, "the key file asks for \(rounds) bcrypt rounds: kc reads 1 to \(BcryptPBKDF.maxRounds)",
                    hint: "re-encrypt it with fewer: `ssh-keygen -p -a 100 -f FILE`")
            }
        default:
            throw KeychainError(
                errSecParam, "the key file uses the KDF \(kdf.prefix(40)), which kc does not read", hint: "rewrite it with `ssh-keygen -p -f FILE`")
        }
        let count = try r.uint32()
        guard count == 1 else {
            throw KeychainError(errSecParam, "the key file holds \(count) keys: kc adds files of one key")
        }
        publicBlob = try r.string()
        section = try r.string()
        tag = try r.raw(cipher.tagLength)
        guard r.isAtEnd else { throw r.malformed("bytes follow the private section") }
        guard !section.isEmpty, section.count % cipher.blockSize == 0 else {
            throw r.malformed("the private section is not a whole number of \(cipher.blockSize)-byte blocks")
        }
    }

    /// The private key and its comment, decrypted with `passphrase` when the file is encrypted.
    /// - Throws: errSecAuthFailed for a wrong passphrase; errSecParam when an encrypted file
    ///   is given none; errSecDecode for a malformed section.
    public func privateKey(passphrase: [UInt8]?) throws -> (key: SSHPrivateKey, comment: String) {
        var plain: [UInt8]
        if isEncrypted {
            guard let passphrase, !passphrase.isEmpty else {
                throw KeychainError(errSecParam, "the key file is encrypted and no passphrase was given")
            }
            var keyAndIV = try BcryptPBKDF.derive(password: passphrase, salt: salt, rounds: rounds, length: cipher.keyLength + cipher.ivLength)
            defer { Sodium.wipe(&keyAndIV) }
            plain = try cipher.decrypt(section, tag: tag, keyAndIV: keyAndIV)
        } else {
            plain = section
        }
        defer { Sodium.wipe(&plain) }
        var r = SSHWireReader(plain, context: "the key file's private section")
        let check1 = try r.uint32(), check2 = try r.uint32()
        guard check1 == check2 else {
            if isEncrypted {
                throw KeychainError(errSecAuthFailed, "wrong passphrase for the key file", hint: "type it again, or check --passphrase-file")
            }
            throw r.malformed("its check words differ")
        }
        var key = try SSHPrivateKey.read(&r)
        do {
            let comment = try r.text()
            var pad: UInt8 = 1
            while !r.isAtEnd {
                guard try r.raw(1) == [pad] else { throw r.malformed("its padding is not 1, 2, 3…") }
                pad &+= 1
            }
            guard key.publicBlob == publicBlob else { throw r.malformed("its public key is not the private key's") }
            return (key, comment)
        } catch {
            key.wipe()
            throw error
        }
    }
}
