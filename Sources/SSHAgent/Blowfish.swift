/// The Blowfish block cipher's state with the "expensive key schedule" of bcrypt
/// (Provos and Mazières, "A Future-Adaptable Password Scheme", 1999: EksBlowfishSetup's
/// ExpandKey with and without salt), which `BcryptPBKDF` needs and libcrypto's BF_* does
/// not offer. Written from those descriptions; only bcrypt_pbkdf uses it.
struct Blowfish {
    /// The 18 subkeys, then the four S-boxes of 256 words each (`BlowfishConstants`).
    private var state: [UInt32]
    /// Where the S-boxes start in `state`.
    private static let sBoxes = 18

    /// The initial state (`BlowfishConstants`: pi's digits).
    init() {
        state = BlowfishConstants.p + BlowfishConstants.s
    }

    /// Encrypts one 64-bit block held as two big-endian halves (16 rounds of F).
    @inline(__always)
    private static func encipher(_ st: UnsafeMutablePointer<UInt32>, _ left: inout UInt32, _ right: inout UInt32) {
        let s = st + sBoxes
        @inline(__always) func f(_ x: UInt32) -> UInt32 {
            ((s[Int(x >> 24)] &+ s[256 + Int(x >> 16 & 0xFF)]) ^ s[512 + Int(x >> 8 & 0xFF)]) &+ s[768 + Int(x & 0xFF)]
        }
        var l = left ^ st[0], r = right
        var i = 1
        while i < 17 {
            r ^= f(l) ^ st[i]
            l ^= f(r) ^ st[i + 1]
            i += 2
        }
        left = r ^ st[17]
        right = l
    }

    /// Encrypts the block (`left`, `right`).
    mutating func encipher(_ left: inout UInt32, _ right: inout UInt32) {
        state.withUnsafeMutableBufferPointer { st in
            guard let base = st.baseAddress else { return }
            Self.encipher(base, &left, &right)
        }
    }

    /// The next big-endian word of `data`, cycling through it (`Blowfish_stream2word`).
    @inline(__always)
    static func word(_ data: UnsafeBufferPointer<UInt8>, _ j: inout Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            value = value << 8 | UInt32(data[j])
            j += 1
            if j == data.count { j = 0 }
        }
        return value
    }

    /// The next big-endian word of `data`, cycling through it.
    static func word(_ data: [UInt8], _ j: inout Int) -> UInt32 {
        data.withUnsafeBufferPointer { word($0, &j) }
    }

    /// ExpandKey(state, salt, key): the key into the subkeys, then every subkey and S-box
    /// entry replaced by encryptions of the running block XORed with the salt's words.
    /// `salt` nil is ExpandKey(state, 0, key), bcrypt's cheap half.
    mutating func expand(key: [UInt8], salt: [UInt8]?) {
        let saltBytes = salt ?? []
        state.withUnsafeMutableBufferPointer { buffer in
            guard let st = buffer.baseAddress else { return }
            key.withUnsafeBufferPointer { key in
                saltBytes.withUnsafeBufferPointer { saltWords in
                    var j = 0
                    for i in 0..<18 { st[i] ^= Self.word(key, &j) }
                    var l: UInt32 = 0, r: UInt32 = 0
                    j = 0
                    var i = 0
                    while i < 18 + 1024 {
                        if salt != nil {
                            l ^= Self.word(saltWords, &j)
                            r ^= Self.word(saltWords, &j)
                        }
                        Self.encipher(st, &l, &r)
                        st[i] = l
                        st[i + 1] = r
                        i += 2
                    }
                }
            }
        }
    }

    /// Overwrites the state (it derives from a passphrase).
    mutating func wipe() {
        for i in state.indices { state[i] = 0 }
    }
}
