import KeychainCore
internal import CSodium

/// bcrypt_pbkdf, the key derivation of OpenSSH's encrypted key files (`kdfname "bcrypt"`,
/// OpenSSH PROTOCOL.key; Ted Unangst's definition in OpenBSD's bcrypt_pbkdf.c): PBKDF2's
/// structure with SHA-512 and, as its pseudo-random function, a bcrypt-like hash of 64
/// rounds of the expensive Blowfish key schedule, the output bytes spread across blocks.
/// Written from that description (`Blowfish`); checked against keys ssh-keygen encrypted.
public enum BcryptPBKDF {
    /// The most rounds a key file may ask for: ssh-keygen's default is 16, `-a 100` is much
    /// used and a few hundred is the most guides suggest; 1,000 takes seconds, where a
    /// crafted file's 2^32 (or the former cap, 10,000: a minute) must not hang `kc ssh add`.
    public static let maxRounds: UInt32 = 1_000

    /// The 32-byte text bcrypt encrypts.
    private static let magic = Array("OxychromaticBlowfishSwatDynamite".utf8)

    /// `length` bytes of key from `password` and `salt` after `rounds` rounds.
    /// - Throws: errSecParam for 0 rounds, more than `maxRounds`, an empty salt or a length
    ///   outside 1-1024.
    public static func derive(password: [UInt8], salt: [UInt8], rounds: UInt32, length: Int) throws -> [UInt8] {
        guard rounds >= 1, rounds <= maxRounds, !salt.isEmpty, salt.count <= 1 << 20, (1...1024).contains(length) else {
            throw KeychainError(
                errSecParam, "the key file's bcrypt parameters are out of range (\(rounds) rounds; kc accepts 1 to \(maxRounds))")
        }
        try Sodium.ensureReady()
        let stride = (length + 31) / 32
        var amount = (length + stride - 1) / stride
        var key = [UInt8](repeating: 0, count: length)
        var hashedPassword = sha512(password)
        defer { Sodium.wipe(&hashedPassword) }
        var remaining = length
        var count: UInt32 = 1
        while remaining > 0 {
            var countSalt = salt + [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            var hashedSalt = sha512(countSalt)
            var block = hash(hashedPassword, hashedSalt)
            var output = block
            for _ in 1..<rounds {
                hashedSalt = sha512(block)
                block = hash(hashedPassword, hashedSalt)
                for i in 0..<32 { output[i] ^= block[i] }
            }
            amount = min(amount, remaining)
            var written = 0
            for i in 0..<amount {
                let destination = i * stride + Int(count - 1)
                if destination >= length { break }
                key[destination] = output[i]
                written += 1
            }
            remaining -= written
            count += 1
            Sodium.wipe(&countSalt)
            Sodium.wipe(&hashedSalt)
            Sodium.wipe(&block)
            Sodium.wipe(&output)
        }
        return key
    }

    /// bcrypt_hash: the expensive schedule keyed by the SHA-512 of the password and salted
    /// by the SHA-512 of the salt, then the magic text encrypted 64 times, its eight words
    /// written little-endian.
    static func hash(_ hashedPassword: [UInt8], _ hashedSalt: [UInt8]) -> [UInt8] {
        var state = Blowfish()
        defer { state.wipe() }
        state.expand(key: hashedPassword, salt: hashedSalt)
        for _ in 0..<64 {
            state.expand(key: hashedSalt, salt: nil)
            state.expand(key: hashedPassword, salt: nil)
        }
        var words = [UInt32](repeating: 0, count: 8)
        var j = 0
        for i in 0..<8 { words[i] = Blowfish.word(magic, &j) }
        for _ in 0..<64 {
            var i = 0
            while i < 8 {
                var l = words[i], r = words[i + 1]
                state.encipher(&l, &r)
                words[i] = l
                words[i + 1] = r
                i += 2
            }
        }
        var out = [UInt8](repeating: 0, count: 32)
        for i in 0..<8 {
            out[4 * i] = UInt8(words[i] & 0xFF)
            out[4 * i + 1] = UInt8(words[i] >> 8 & 0xFF)
            out[4 * i + 2] = UInt8(words[i] >> 16 & 0xFF)
            out[4 * i + 3] = UInt8(words[i] >> 24)
        }
        return out
    }

    /// SHA-512 through libsodium.
    static func sha512(_ input: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        _ = crypto_hash_sha512(&digest, input, UInt64(input.count))
        return digest
    }
}
