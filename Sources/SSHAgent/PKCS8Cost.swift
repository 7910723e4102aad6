import KeychainCore

/// Reads the key-derivation parameters of an encrypted PKCS#8 key (`BEGIN ENCRYPTED PRIVATE
/// KEY`, RFC 5208 / RFC 8018) from its DER before anything is decrypted, and refuses a cost
/// over kc's caps with errSecParam, so a crafted file cannot keep `kc ssh add` busy for
/// minutes (the file chooses the count; libcrypto would run whatever it says):
///
/// - PBES2 with PBKDF2: at most `maxIterations` iterations (OpenSSL's default is 2,048);
/// - PBES2 with scrypt: N at most 2^20, r at most 32, p at most 16, N·r·p at most 2^24;
/// - PBES1 and PKCS#12's PBE schemes: at most `maxIterations` iterations;
/// - any other scheme or KDF: not read (errSecParam).
///
///     EncryptedPrivateKeyInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING }
///     PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier, encryptionScheme … }
///     PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER, … }
///     scrypt-params ::= SEQUENCE { salt, costParameter N, blockSize r, parallelization p, … }
public enum PKCS8Cost {
    /// The most PBKDF2 (or PBES1) iterations an encrypted PKCS#8 key may ask for.
    public static let maxIterations = 1_000_000
    /// The largest scrypt N.
    public static let maxScryptN = 1 << 20

    // Object identifiers, DER contents.
    static let pbes2: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
    static let pbkdf2: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
    static let scrypt: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B]
    /// 1.2.840.113549.1.5.x (PBES1) and 1.2.840.113549.1.12.1.x (PKCS#12 PBE): salt, count.
    static let pbes1Prefix: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05]
    static let pkcs12Prefix: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x01]

    /// Checks the DER of an EncryptedPrivateKeyInfo.
    /// - Throws: errSecParam over a cap or for a scheme kc does not read; errSecDecode when
    ///   the DER is malformed.
    public static func check(der: [UInt8]) throws {
        var top = DERReader(der)
        var info = try top.sequence()
        var algorithm = try info.sequence()
        let oid = try algorithm.oid()
        if oid == pbes2 {
            var params = try algorithm.sequence()
            var kdf = try params.sequence()
            let kdfOID = try kdf.oid()
            var kdfParams = try kdf.sequence()
            _ = try kdfParams.element(tag: 0x04)   // salt
            if kdfOID == pbkdf2 {
                try checkIterations(try kdfParams.integer())
            } else if kdfOID == scrypt {
                let n = try kdfParams.integer(), r = try kdfParams.integer(), p = try kdfParams.integer()
                guard n >= 2, n <= maxScryptN, r >= 1, r <= 32, p >= 1, p <= 16, n * r * p <= 1 << 24 else {
                    throw KeychainError(
                        errSecParam, "the key file asks for scrypt with N=\(n), r=\(r), p=\(p): kc reads N up to 2^20, r up to 32, p up to 16",
                        hint: "re-encrypt it: `openssl pkcs8 -topk8 -v2 aes-256-cbc`, or `ssh-keygen -p -f FILE`")
                }
            } else {
                throw KeychainError(errSecParam, "the key file's key derivation is not PBKDF2 or scrypt: kc does not read it")
            }
        } else if oid.starts(with: pbes1Prefix) || oid.starts(with: pkcs12Prefix) {
            var params = try algorithm.sequence()
            _ = try params.element(tag: 0x04)
            try checkIterations(try params.integer())
        } else {
            throw KeychainError(errSecParam, "the key file's encryption scheme is not one kc reads (PBES2, PBES1, PKCS#12)")
        }
    }

    private static func checkIterations(_ count: Int) throws {
        guard count >= 1, count <= maxIterations else {
            throw KeychainError(
                errSecParam, "the key file asks for \(count) key derivation iterations: kc reads at most \(maxIterations)",
                hint: "re-encrypt it: `openssl pkcs8 -topk8 -v2 aes-256-cbc`, or `ssh-keygen -p -f FILE`")
        }
    }
}

/// The few DER (X.690) forms PKCS8Cost reads, every length checked.
struct DERReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = ArraySlice(bytes)
        offset = self.bytes.startIndex
    }

    private func malformed() -> KeychainError {
        KeychainError(errSecDecode, "the key file is malformed: its encrypted PKCS#8 structure does not parse")
    }

    /// The contents of the next element, which must have `tag`.
    mutating func element(tag: UInt8) throws -> ArraySlice<UInt8> {
        guard offset + 2 <= bytes.endIndex, bytes[offset] == tag else { throw malformed() }
        var length = Int(bytes[offset + 1])
        var start = offset + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...3).contains(count), start + count <= bytes.endIndex else { throw malformed() }
            length = bytes[start..<(start + count)].reduce(0) { $0 << 8 | Int($1) }
            start += count
        }
        guard length <= bytes.endIndex - start else { throw malformed() }
        offset = start + length
        return bytes[start..<(start + length)]
    }

    mutating func sequence() throws -> DERReader { DERReader(try element(tag: 0x30)) }

    mutating func oid() throws -> [UInt8] { Array(try element(tag: 0x06)) }

    /// A non-negative INTEGER of at most 7 bytes (larger ones are past every cap).
    mutating func integer() throws -> Int {
        let raw = try element(tag: 0x02)
        guard let first = raw.first, first & 0x80 == 0 else { throw malformed() }
        let magnitude = raw.drop { $0 == 0 }
        guard magnitude.count <= 7 else { return Int.max / (1 << 30) }
        return magnitude.reduce(0) { $0 << 8 | Int($1) }
    }
}
