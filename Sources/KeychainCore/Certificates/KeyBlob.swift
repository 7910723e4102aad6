/// What a key's data says about the key: its class (public or private), its type (RSA, EC,
/// Ed25519…) and its size in bits, which Apple's keychain records as kSecAttrKeyClass,
/// kSecAttrKeyType and kSecAttrKeySizeInBits when a key is added (SecKeyCreateWithData).
/// `kc add --class key --data-file` fills them from here unless given, so an RSA key
/// shows its modulus length rather than 0.
///
/// Recognised, as DER or as the PEM that wraps it (the first block):
/// - PKCS #1 RSAPublicKey and RSAPrivateKey (Apple's own external form for RSA keys);
/// - SubjectPublicKeyInfo (RFC 5280) and PKCS #8 PrivateKeyInfo (RFC 5208/5958) for RSA,
///   EC (P-224, P-256, P-384, P-521, secp256k1), DSA, Ed25519 and X25519;
/// - SEC 1 ECPrivateKey (RFC 5915).
/// Anything else (an encrypted key, an opaque blob) gives nil and the attributes stay as
/// given. The bytes are the user's: `DERReader` reads them, bounds-checked, never trapping.
/// A private key's bytes are never copied out of the caller's buffer, except a PEM body's
/// decoding, which is wiped after reading.
package struct KeyBlob: Equatable, Sendable {
    /// kSecAttrKeyClass: 0 public, 1 private.
    package var keyClass: Int
    /// kSecAttrKeyType: 42 RSA, 43 DSA, 73 EC, 105 Ed25519, 106 X25519.
    package var keyType: Int
    /// kSecAttrKeySizeInBits, when the encoding tells it.
    package var bits: Int?

    /// Apple's kSecAttrKeyClass values.
    static let publicClass = 0, privateClass = 1
    /// Apple's kSecAttrKeyType values (Constants.swift).
    static let rsa = 42, dsa = 43, ec = 73, ed25519 = 105, x25519 = 106

    /// Reads a key's data; nil when it is no key encoding kc knows.
    package init?(data: [UInt8]) {
        if var der = Self.pemBody(data) {
            defer { Sodium.wipe(&der) }
            guard let parsed = Self.parse(DERReader(der)) else { return nil }
            self = parsed
            return
        }
        guard let parsed = Self.parse(DERReader(data)) else { return nil }
        self = parsed
    }

    /// A key of this class, type and size.
    init(keyClass: Int, keyType: Int, bits: Int?) {
        self.keyClass = keyClass
        self.keyType = keyType
        self.bits = bits
    }

    /// Shorthand for the readers below.
    private init(_ keyClass: Int, _ keyType: Int, _ bits: Int?) {
        self.init(keyClass: keyClass, keyType: keyType, bits: bits)
    }

    /// The DER inside the first PEM block (`-----BEGIN …-----`), decoded from base64 into a
    /// buffer the caller wipes; nil when `data` is not PEM or the block is not plain base64
    /// (RFC 1421 headers such as Proc-Type mark an encrypted key: nothing to read).
    static func pemBody(_ data: [UInt8]) -> [UInt8]? {
        let begin = Array("-----BEGIN ".utf8), end = Array("-----END ".utf8)
        func starts(_ prefix: [UInt8], at i: Int) -> Bool {
            i + prefix.count <= data.count && data[i..<(i + prefix.count)].elementsEqual(prefix)
        }
        // The BEGIN line: at the start or after a line end.
        var i = 0
        while i < data.count && !(starts(begin, at: i) && (i == 0 || data[i - 1] == 0x0A)) { i += 1 }
        guard i < data.count else { return nil }
        while i < data.count && data[i] != 0x0A { i += 1 }   // skip the rest of the BEGIN line
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 3 / 4)
        var accumulator: UInt32 = 0, pending = 0, padding = 0
        while i < data.count {
            let byte = data[i]
            if byte == 0x2D && i > 0 && data[i - 1] == 0x0A && starts(end, at: i) {
                // The END line: what is left is a whole group, or one closed by its padding.
                switch (pending, padding) {
                case (0, 0): break
                case (2, 2): out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
                case (3, 1):
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
                default:
                    Sodium.wipe(&out)
                    return nil
                }
                return out
            }
            i += 1
            let value: UInt32
            switch byte {
            case 0x41...0x5A: value = UInt32(byte - 0x41)
            case 0x61...0x7A: value = UInt32(byte - 0x61) + 26
            case 0x30...0x39: value = UInt32(byte - 0x30) + 52
            case 0x2B: value = 62
            case 0x2F: value = 63
            case 0x0A, 0x0D, 0x20, 0x09: continue
            case 0x3D where padding < 2:
                padding += 1
                continue
            default:
                Sodium.wipe(&out)
                return nil
            }
            guard padding == 0 else { break }
            accumulator = accumulator << 6 | value
            pending += 1
            if pending == 4 {
                out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                out.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                pending = 0
            }
        }
        Sodium.wipe(&out)
        return nil
    }

    /// The key in one DER structure, or nil.
    static func parse(_ der: DERReader) -> KeyBlob? {
        var top = der
        guard let sequence = top.read(tag: Tag.sequence), top.isAtEnd else { return nil }
        var fields = sequence.contents
        guard let first = fields.readElement() else { return nil }
        switch first.tag {
        case Tag.sequence:
            // SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }
            guard let key = fields.read(tag: Tag.bitString), fields.isAtEnd, let payload = key.bitStringPayload else { return nil }
            return algorithm(first, key: DERReader(payload), keyClass: publicClass)
        case Tag.integer:
            guard let second = fields.readElement() else { return nil }
            switch second.tag {
            case Tag.integer:
                // RSAPublicKey ::= SEQUENCE { modulus, publicExponent }
                if fields.isAtEnd {
                    guard let bits = positiveBits(first), positiveBits(second) != nil else { return nil }
                    return KeyBlob(publicClass, rsa, bits)
                }
                // RSAPrivateKey ::= SEQUENCE { version, modulus, publicExponent, privateExponent,
                //                              prime1, prime2, exponent1, exponent2, coefficient, ... }
                for _ in 0..<7 { guard fields.read(tag: Tag.integer) != nil else { return nil } }
                guard isSmallVersion(first), let bits = positiveBits(second) else { return nil }
                return KeyBlob(privateClass, rsa, bits)
            case Tag.sequence:
                // PrivateKeyInfo ::= SEQUENCE { version, privateKeyAlgorithm, privateKey OCTET STRING, ... }
                guard isSmallVersion(first), let key = fields.read(tag: Tag.octetString) else { return nil }
                return algorithm(second, key: key.contents, keyClass: privateClass)
            case Tag.octetString:
                // ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING,
                //                             parameters [0] ECParameters OPTIONAL, publicKey [1] BIT STRING OPTIONAL }
                guard first.content == [1] else { return nil }
                var bits = curveBits(privateKeyLength: second.contentLength)
                if let explicit = fields.read(tag: 0xA0) {
                    var inner = explicit.contents
                    if let curve = inner.read(tag: Tag.objectIdentifier), let named = curveBits(curve) { bits = named }
                }
                return KeyBlob(privateClass, ec, bits)
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// The key an AlgorithmIdentifier and its key bytes describe (SPKI's BIT STRING, or PKCS
    /// #8's OCTET STRING).
    private static func algorithm(_ identifier: DERElement, key: DERReader, keyClass: Int) -> KeyBlob? {
        var fields = identifier.contents
        guard let oid = fields.read(tag: Tag.objectIdentifier)?.dottedObjectIdentifier else { return nil }
        let parameters = fields.readElement()
        switch oid {
        case "1.2.840.113549.1.1.1", "1.2.840.113549.1.1.10":   // rsaEncryption, RSASSA-PSS
            guard let inner = parse(key), inner.keyType == rsa, inner.keyClass == keyClass else { return nil }
            return inner
        case "1.2.840.10045.2.1":   // id-ecPublicKey
            var bits = parameters.flatMap { $0.tag == Tag.objectIdentifier ? curveBits($0) : nil }
            if bits == nil, keyClass == privateClass, let inner = parse(key), inner.keyType == ec { bits = inner.bits }
            return KeyBlob(keyClass, ec, bits)
        case "1.2.840.10040.4.1":   // id-dsa: parameters SEQUENCE { p, q, g }
            var bits: Int?
            if let parameters, parameters.tag == Tag.sequence {
                var pqg = parameters.contents
                bits = pqg.read(tag: Tag.integer).flatMap(positiveBits)
            }
            return KeyBlob(keyClass, dsa, bits)
        case "1.3.101.112": return KeyBlob(keyClass, ed25519, 256)
        case "1.3.101.110": return KeyBlob(keyClass, x25519, 256)
        default: return nil
        }
    }

    /// The size of a named curve, by its OID.
    private static func curveBits(_ oid: DERElement) -> Int? {
        switch oid.dottedObjectIdentifier {
        case "1.3.132.0.33": return 224   // secp224r1
        case "1.2.840.10045.3.1.7": return 256   // prime256v1 (P-256)
        case "1.3.132.0.10": return 256   // secp256k1
        case "1.3.132.0.34": return 384   // secp384r1
        case "1.3.132.0.35": return 521   // secp521r1
        default: return nil
        }
    }

    /// The size of a curve from the length of a private scalar (SEC 1: ceil(bits / 8) bytes).
    private static func curveBits(privateKeyLength length: Int) -> Int? {
        switch length {
        case 28: return 224
        case 32: return 256
        case 48: return 384
        case 66: return 521
        default: return nil
        }
    }

    /// The bit length of a positive INTEGER (an RSA modulus, a DSA prime); nil for zero or a
    /// negative or non-minimal encoding.
    static func positiveBits(_ integer: DERElement) -> Int? {
        guard integer.tag == Tag.integer, integer.contentLength > 0 else { return nil }
        var index = integer.contentStart
        let end = integer.end
        guard integer.bytes[index] & 0x80 == 0 else { return nil }   // negative
        if integer.bytes[index] == 0 {
            index += 1
            // DER: a leading zero only before a byte with its top bit set.
            guard index < end, integer.bytes[index] & 0x80 != 0 else { return nil }
        }
        let top = integer.bytes[index]
        return (end - index - 1) * 8 + (8 - top.leadingZeroBitCount)
    }

    /// A version INTEGER of 0 or 1 (PKCS #1 two-prime or multi-prime, PKCS #8 v1 or v2).
    private static func isSmallVersion(_ integer: DERElement) -> Bool {
        integer.tag == Tag.integer && (integer.content == [0] || integer.content == [1])
    }

    /// The DER tags read here.
    private enum Tag {
        static let integer: UInt8 = 0x02
        static let bitString: UInt8 = 0x03
        static let octetString: UInt8 = 0x04
        static let objectIdentifier: UInt8 = 0x06
        static let sequence: UInt8 = 0x30
    }
}
