import KeychainCore
internal import CSodium

/// A private SSH key in its wire form: what `SSH2_AGENTC_ADD_IDENTITY` carries without the
/// comment (draft-miller-ssh-agent §4.2.3; OpenSSH PROTOCOL.key's per-key private section),
/// the one form kc stores as a key item's secret and hands the SSH agent:
///
///     string "ssh-ed25519", string ENC(A), string k || ENC(A)
///     string "ecdsa-sha2-nistp256", string "nistp256", string Q, mpint d
///     string "ssh-rsa", mpint n, mpint e, mpint d, mpint iqmp, mpint p, mpint q
///
/// Made only through `init(wire:)` or `read(_:)`, which check every field, so a value of
/// this type is a well-formed key of a type kc keeps. Holds secret bytes: `wipe()` it.
public struct SSHPrivateKey {
    /// The key's type.
    public let type: SSHKeyType
    /// The private wire form (see the type's description).
    public private(set) var wire: [UInt8]
    /// The public key blob (`string type` and the public fields): what `ssh-add -L` prints
    /// in base64 and the agent offers.
    public let publicBlob: [UInt8]

    /// The key whose wire form is all of `wire`.
    /// - Throws: errSecDecode for a malformed or inconsistent key, errSecParam for a type
    ///   kc does not keep or an RSA key under 2048 bits.
    /// - Parameter checkingHalves: false skips libcrypto's pairwise check of an ECDSA or RSA
    ///   key (the fields are still checked): for a key kc stored, checked when it was added.
    public init(wire: [UInt8], checkingHalves: Bool = true) throws {
        var reader = SSHWireReader(wire, context: "the SSH private key")
        self = try Self.read(&reader, checkingHalves: checkingHalves)
        guard reader.isAtEnd else { throw reader.malformed("bytes follow the key") }
    }

    private init(type: SSHKeyType, wire: [UInt8], publicBlob: [UInt8]) {
        self.type = type
        self.wire = wire
        self.publicBlob = publicBlob
    }

    /// Reads one key in wire form from `reader` (a key file's private section holds one,
    /// then its comment), leaving the reader after its last field.
    public static func read(_ reader: inout SSHWireReader, checkingHalves: Bool = true) throws -> SSHPrivateKey {
        let start = reader.offset
        let type = try SSHKeyType(wireName: reader.text())
        var blob = SSHWireWriter()
        blob.string(type.rawValue)
        switch type {
        case .ed25519:
            let a = try reader.string()
            var secret = try reader.string()
            defer { Sodium.wipe(&secret) }
            guard a.count == 32, secret.count == 64, Array(secret[32...]) == a else {
                throw reader.malformed("an Ed25519 key is not 32 public and 64 private bytes that end with the public key")
            }
            guard try Ed25519.publicKey(seed: Array(secret[..<32])) == a else {
                throw reader.malformed("the Ed25519 public key is not the private key's")
            }
            blob.string(a)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let curve = try reader.text()
            guard curve == type.curve else { throw reader.malformed("the curve \(curve) is not the one of \(type.rawValue)") }
            let q = try reader.string()
            var d = try reader.positiveMPInt()
            defer { Sodium.wipe(&d) }
            guard q.count == 1 + 2 * type.fieldBytes, q.first == 4 else {
                throw reader.malformed("the ECDSA public key is not an uncompressed point of \(curve)")
            }
            guard d.count <= type.fieldBytes else { throw reader.malformed("the ECDSA private key is larger than the curve") }
            blob.string(curve)
            blob.string(q)
        case .rsa:
            let n = try reader.positiveMPInt()
            let e = try reader.positiveMPInt()
            for _ in 0..<4 {   // d, iqmp, p, q
                var field = try reader.positiveMPInt()
                Sodium.wipe(&field)
            }
            let bits = n.count * 8 - n[0].leadingZeroBitCount
            guard bits >= SSHKeyType.minimumRSABits else {
                throw KeychainError(
                    errSecParam, "this RSA key has \(bits) bits: kc keeps RSA keys of \(SSHKeyType.minimumRSABits) bits or more",
                    hint: "make a new key: `kc ssh generate NAME` (Ed25519), or --type rsa (3072 bits)")
            }
            guard bits <= SSHKeyType.maximumRSABits else {
                throw KeychainError(errSecParam, "this RSA key has \(bits) bits: kc keeps RSA keys of \(SSHKeyType.maximumRSABits) bits or fewer")
            }
            blob.mpint(magnitude: e)
            blob.mpint(magnitude: n)
        }
        let wire = Array(reader.bytes[start..<reader.offset])
        let key = SSHPrivateKey(type: type, wire: wire, publicBlob: blob.bytes)
        if checkingHalves { try SSHKeyCheck.pairwise(key) }
        return key
    }

    /// Overwrites the private bytes with zeros.
    public mutating func wipe() { Sodium.wipe(&wire) }

    /// The public key as `ssh-add -L` and `authorized_keys` write it: `TYPE BASE64 COMMENT`.
    public func publicLine(comment: String) -> String { SSHPublicKey.line(blob: publicBlob, comment: comment) }
}

/// Ed25519 through libsodium.
enum Ed25519 {
    /// The public key of a 32-byte seed (`crypto_sign_seed_keypair`).
    static func publicKey(seed: [UInt8]) throws -> [UInt8] {
        try Sodium.ensureReady()
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 64)
        defer { Sodium.wipe(&sk) }
        guard crypto_sign_seed_keypair(&pk, &sk, seed) == 0 else {
            throw KeychainError(errSecInternalError, "libsodium could not derive an Ed25519 key")
        }
        return pk
    }
}
