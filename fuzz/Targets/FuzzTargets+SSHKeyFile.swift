import SSHAgent

extension FuzzTargets {
    /// `kc ssh add`'s key file reader on any bytes: `SSHKeyFile` (OpenSSH's format, PEM,
    /// encrypted PKCS#8's cost check), then the private key of an unencrypted file
    /// (OpenSSHKeyFile's section, SSHPrivateKey.read, libcrypto's pairwise check; PEM through
    /// libcrypto). Encrypted files are parsed, not decrypted (bcrypt's rounds would make
    /// each input slow). - Returns: whether a key was read.
    static func sshKeyFile(_ bytes: [UInt8]) -> Bool {
        guard var file = try? SSHKeyFile(bytes) else { return false }
        defer { file.wipe() }
        guard !file.isEncrypted, var (key, _) = try? file.privateKey(passphrase: nil) else { return false }
        key.wipe()
        return true
    }

    /// OpenSSH key files of a fresh Ed25519, ECDSA P-256 and P-384 key, unencrypted, as ssh-keygen
    /// writes them (`openssh-key-v1`, cipher and KDF `none`, one key, check words, comment,
    /// padding 1, 2, 3…).
    static var sshKeyFileSeeds: [[UInt8]] {
        let string = frame
        var seeds: [[UInt8]] = []
        for type in [SSHKeyType.ed25519, .ecdsaP256, .ecdsaP384] {
            guard var key = try? SSHKeyGenerator.generate(type) else { continue }
            defer { key.wipe() }
            var section = [UInt8](repeating: 0x5A, count: 8) + key.wire + string(Array("seed".utf8))
            var pad: UInt8 = 1
            while section.count % 8 != 0 {
                section.append(pad)
                pad += 1
            }
            let binary =
                Array("openssh-key-v1".utf8) + [0] + string(Array("none".utf8)) + string(Array("none".utf8)) + string([])
                + [0, 0, 0, 1] + string(key.publicBlob) + string(section)
            let base64 = SSHPublicKey.base64(binary)
            seeds.append(Array("-----BEGIN OPENSSH PRIVATE KEY-----\n\(base64)\n-----END OPENSSH PRIVATE KEY-----\n".utf8))
        }
        return seeds
    }
}
