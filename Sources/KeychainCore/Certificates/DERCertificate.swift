/// Fields Apple's keychain derives from a certificate's DER (issuer, serial, subject, public-key hash...)
///
/// This is a deliberately minimal, strictly bounds-checked reader for X.509
/// certificates (RFC 5280). It walks only the fixed structure
///
///     Certificate ::= SEQUENCE {
///         tbsCertificate SEQUENCE {
///             version         [0] EXPLICIT INTEGER OPTIONAL,
///             serialNumber    INTEGER,
///             signature       AlgorithmIdentifier,
///             issuer          Name,
///             validity        SEQUENCE { Time, Time },
///             subject         Name,
///             subjectPublicKeyInfo SEQUENCE { AlgorithmIdentifier, BIT STRING },
///             issuerUniqueID  [1] IMPLICIT BIT STRING OPTIONAL,
///             subjectUniqueID [2] IMPLICIT BIT STRING OPTIONAL,
///             extensions      [3] EXPLICIT SEQUENCE OF Extension OPTIONAL },
///         signatureAlgorithm AlgorithmIdentifier,
///         signature          BIT STRING }
///
/// so it has no recursion and a fixed maximum nesting depth. Values whose
/// inner structure is irrelevant here (algorithm parameters, attribute
/// values inside a Name, extension values other than the subject key
/// identifier) are only checked to be one well-formed TLV; they are not
/// descended into. It verifies nothing cryptographic: no signature,
/// validity period, or chain checks.
///
/// DER rules enforced: single-byte tags only, definite lengths only, minimal
/// length encoding (long form only for lengths >= 128, no leading zero
/// length bytes, at most 4 length bytes), every length within its parent,
/// no bytes after the outer SEQUENCE, primitive/constructed bits as DER
/// requires, BIT STRING unused-bit counts 0...7 with zero padding bits,
/// BOOLEAN as 0x00/0xFF.
struct DERCertificate: Equatable {
    /// X.509 version as Apple's kSecAttrCertificateType: v1 -> 1, v3 -> 3
    /// (explicit [0] version INTEGER + 1; absent -> 1).
    var version: Int
    /// Content bytes of the serialNumber INTEGER (as encoded, including any leading 0x00).
    var serialNumber: [UInt8]
    /// The full DER encoding (tag+length+content) of the issuer Name SEQUENCE.
    var issuer: [UInt8]
    /// The full DER encoding of the subject Name SEQUENCE.
    var subject: [UInt8]
    /// Extension 2.5.29.14 if present: the content of the inner OCTET STRING.
    var subjectKeyID: [UInt8]?
    /// SHA1 of the subjectPublicKey BIT STRING contents, excluding the leading unused-bits byte.
    var publicKeyHash: [UInt8]

    /// Parses a DER-encoded X.509 certificate. Returns nil for anything that
    /// is not a well-formed DER certificate; never traps, never reads out of bounds.
    init?(der: [UInt8]) {
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
        var top = Reader(der)
        guard let certificate = top.read(tag: Tag.sequence), top.isAtEnd else { return nil }

        var certificateFields = certificate.contents
        guard let tbsCertificate = certificateFields.read(tag: Tag.sequence),
              let signatureAlgorithm = certificateFields.read(tag: Tag.sequence),
              Self.isAlgorithmIdentifier(signatureAlgorithm),
              let signature = certificateFields.read(tag: Tag.bitString),
              Self.bitStringPayload(signature) != nil,
              certificateFields.isAtEnd
        else { return nil }

        var tbs = tbsCertificate.contents

        // version [0] EXPLICIT Version DEFAULT v1
        var version = 1
        if tbs.peekTag == Tag.versionTag {
            guard let explicitVersion = tbs.read(tag: Tag.versionTag) else { return nil }
            var versionFields = explicitVersion.contents
            guard let versionInteger = versionFields.read(tag: Tag.integer),
                  versionFields.isAtEnd
            else { return nil }
            let value = versionInteger.content
            // v1(0), v2(1), v3(2): always a single content byte when minimally encoded.
            guard value.count == 1, let number = value.first, number <= 2 else { return nil }
            version = Int(number) + 1
        }

        // serialNumber CertificateSerialNumber (INTEGER)
        guard let serial = tbs.read(tag: Tag.integer), serial.contentLength > 0 else { return nil }

        // signature AlgorithmIdentifier
        guard let innerSignatureAlgorithm = tbs.read(tag: Tag.sequence),
              Self.isAlgorithmIdentifier(innerSignatureAlgorithm)
        else { return nil }

        // issuer Name
        guard let issuer = tbs.read(tag: Tag.sequence), Self.isName(issuer) else { return nil }

        // validity Validity ::= SEQUENCE { notBefore Time, notAfter Time }
        guard let validity = tbs.read(tag: Tag.sequence), Self.isValidity(validity) else { return nil }

        // subject Name
        guard let subject = tbs.read(tag: Tag.sequence), Self.isName(subject) else { return nil }

        // subjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }
        guard let subjectPublicKeyInfo = tbs.read(tag: Tag.sequence) else { return nil }
        var keyInfoFields = subjectPublicKeyInfo.contents
        guard let keyAlgorithm = keyInfoFields.read(tag: Tag.sequence),
              Self.isAlgorithmIdentifier(keyAlgorithm),
              let subjectPublicKey = keyInfoFields.read(tag: Tag.bitString),
              let publicKeyBytes = Self.bitStringPayload(subjectPublicKey),
              keyInfoFields.isAtEnd
        else { return nil }

        // issuerUniqueID [1] IMPLICIT BIT STRING OPTIONAL (primitive, as DER requires)
        if tbs.peekTag == Tag.issuerUniqueID {
            guard let uniqueID = tbs.read(tag: Tag.issuerUniqueID),
                  Self.bitStringPayload(uniqueID) != nil
            else { return nil }
        }
        // subjectUniqueID [2] IMPLICIT BIT STRING OPTIONAL
        if tbs.peekTag == Tag.subjectUniqueID {
            guard let uniqueID = tbs.read(tag: Tag.subjectUniqueID),
                  Self.bitStringPayload(uniqueID) != nil
            else { return nil }
        }

        // extensions [3] EXPLICIT Extensions OPTIONAL
        var subjectKeyID: [UInt8]? = nil
        if tbs.peekTag == Tag.extensionsTag {
            guard let explicitExtensions = tbs.read(tag: Tag.extensionsTag) else { return nil }
            var wrapper = explicitExtensions.contents
            guard let extensions = wrapper.read(tag: Tag.sequence), wrapper.isAtEnd else { return nil }
            var extensionList = extensions.contents
            while !extensionList.isAtEnd {
                // Extension ::= SEQUENCE { extnID OID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }
                guard let element = extensionList.read(tag: Tag.sequence) else { return nil }
                var extensionFields = element.contents
                guard let extnID = extensionFields.read(tag: Tag.objectIdentifier),
                      Self.isObjectIdentifier(extnID)
                else { return nil }
                if extensionFields.peekTag == Tag.boolean {
                    guard let critical = extensionFields.read(tag: Tag.boolean),
                          critical.contentLength == 1,
                          let flag = critical.content.first,
                          flag == 0x00 || flag == 0xFF
                    else { return nil }
                }
                guard let extnValue = extensionFields.read(tag: Tag.octetString),
                      extensionFields.isAtEnd
                else { return nil }

                if extnID.content == Self.subjectKeyIdentifierOID {
                    // SubjectKeyIdentifier ::= KeyIdentifier (OCTET STRING); at most one per certificate.
                    guard subjectKeyID == nil else { return nil }
                    var keyIdentifierReader = extnValue.contents
                    guard let keyIdentifier = keyIdentifierReader.read(tag: Tag.octetString),
                          keyIdentifierReader.isAtEnd
                    else { return nil }
                    subjectKeyID = keyIdentifier.content
                }
            }
        }

        guard tbs.isAtEnd else { return nil }

        self.version = version
        self.serialNumber = serial.content
        self.issuer = issuer.encoded
        self.subject = subject.encoded
        self.subjectKeyID = subjectKeyID
        self.publicKeyHash = SHA1.hash(publicKeyBytes)
    }
}

extension DERCertificate {
    /// The DER content bytes of OID 2.5.29.14 (id-ce-subjectKeyIdentifier).
    private static let subjectKeyIdentifierOID: [UInt8] = [0x55, 0x1D, 0x0E]

    /// Single-byte DER identifier octets used by the certificate structure.
    private enum Tag {
        static let boolean: UInt8 = 0x01
        static let integer: UInt8 = 0x02
        static let bitString: UInt8 = 0x03
        static let octetString: UInt8 = 0x04
        static let objectIdentifier: UInt8 = 0x06
        static let utcTime: UInt8 = 0x17
        static let generalizedTime: UInt8 = 0x18
        static let sequence: UInt8 = 0x30
        static let set: UInt8 = 0x31
        static let versionTag: UInt8 = 0xA0       // [0] constructed (EXPLICIT)
        static let issuerUniqueID: UInt8 = 0x81   // [1] primitive (IMPLICIT BIT STRING)
        static let subjectUniqueID: UInt8 = 0x82  // [2] primitive (IMPLICIT BIT STRING)
        static let extensionsTag: UInt8 = 0xA3    // [3] constructed (EXPLICIT)
    }

    /// One decoded TLV. Invariant: 0 <= start < contentStart <= end <= bytes.count.
    private struct Element {
        let bytes: [UInt8]
        let tag: UInt8
        let start: Int
        let contentStart: Int
        let end: Int

        var contentLength: Int { end - contentStart }
        /// The content octets (without tag and length).
        var content: [UInt8] { Array(bytes[contentStart..<end]) }
        /// The complete encoding (tag, length and content).
        var encoded: [UInt8] { Array(bytes[start..<end]) }
        /// A reader over the content octets.
        var contents: Reader { Reader(bytes, from: contentStart, to: end) }
    }

    /// A cursor over a bounded window of a byte array.
    /// Invariant: 0 <= position <= end <= bytes.count.
    private struct Reader {
        private let bytes: [UInt8]
        private var position: Int
        private let end: Int

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            self.position = 0
            self.end = bytes.count
        }

        /// Only called by `Element.contents`, whose range is already validated.
        fileprivate init(_ bytes: [UInt8], from start: Int, to end: Int) {
            let safeEnd = min(max(end, 0), bytes.count)
            self.bytes = bytes
            self.position = min(max(start, 0), safeEnd)
            self.end = safeEnd
        }

        var isAtEnd: Bool { position >= end }

        /// The next identifier octet, if any, without consuming it.
        var peekTag: UInt8? { position < end ? bytes[position] : nil }

        /// Reads the next element and requires its tag to be `tag`.
        mutating func read(tag: UInt8) -> Element? {
            guard peekTag == tag else { return nil }
            return readElement()
        }

        /// Reads the next TLV, whatever its tag. Returns nil (without
        /// advancing) on anything malformed or running past `end`.
        mutating func readElement() -> Element? {
            let start = position
            guard start < end else { return nil }
            let tag = bytes[start]
            // High-tag-number form (low five bits all set) never occurs in the walked structure.
            guard tag & 0x1F != 0x1F else { return nil }

            var cursor = start + 1
            guard cursor < end else { return nil }
            let lengthByte = bytes[cursor]
            cursor += 1

            let length: Int
            if lengthByte < 0x80 {
                length = Int(lengthByte)
            } else {
                // 0x80 is the (BER-only) indefinite form; 0x85... would need more than 4 length bytes.
                let lengthOfLength = Int(lengthByte & 0x7F)
                guard lengthOfLength >= 1, lengthOfLength <= 4,
                      lengthOfLength <= end - cursor
                else { return nil }
                // DER: minimal encoding, so no leading zero byte...
                guard bytes[cursor] != 0 else { return nil }
                var value: UInt64 = 0
                for index in cursor..<(cursor + lengthOfLength) {
                    value = (value << 8) | UInt64(bytes[index])
                }
                cursor += lengthOfLength
                // ...and the long form only for lengths that do not fit the short form.
                guard value >= 0x80, value <= UInt64(end - cursor) else { return nil }
                length = Int(value)
            }
            guard length <= end - cursor else { return nil }

            position = cursor + length
            return Element(bytes: bytes, tag: tag, start: start, contentStart: cursor, end: cursor + length)
        }
    }

    /// OBJECT IDENTIFIER content: non-empty, every subidentifier minimally
    /// encoded (no leading 0x80 byte) and terminated (last byte < 0x80).
    private static func isObjectIdentifier(_ element: Element) -> Bool {
        let content = element.content
        guard let last = content.last, last & 0x80 == 0 else { return false }
        var startsSubidentifier = true
        for byte in content {
            if startsSubidentifier && byte == 0x80 { return false }
            startsSubidentifier = byte & 0x80 == 0
        }
        return true
    }

    /// AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }
    private static func isAlgorithmIdentifier(_ element: Element) -> Bool {
        var fields = element.contents
        guard let algorithm = fields.read(tag: Tag.objectIdentifier),
              isObjectIdentifier(algorithm)
        else { return false }
        if !fields.isAtEnd {
            guard fields.readElement() != nil else { return false }
        }
        return fields.isAtEnd
    }

    /// Name ::= SEQUENCE OF RelativeDistinguishedName
    /// RelativeDistinguishedName ::= SET SIZE (1..MAX) OF SEQUENCE { type OID, value ANY }
    /// (the element's own SEQUENCE tag is checked by the caller).
    private static func isName(_ element: Element) -> Bool {
        var relativeNames = element.contents
        while !relativeNames.isAtEnd {
            guard let relativeName = relativeNames.read(tag: Tag.set) else { return false }
            var attributes = relativeName.contents
            guard !attributes.isAtEnd else { return false }
            while !attributes.isAtEnd {
                guard let attribute = attributes.read(tag: Tag.sequence) else { return false }
                var fields = attribute.contents
                guard let type = fields.read(tag: Tag.objectIdentifier),
                      isObjectIdentifier(type),
                      fields.readElement() != nil,
                      fields.isAtEnd
                else { return false }
            }
        }
        return true
    }

    /// Validity ::= SEQUENCE { notBefore Time, notAfter Time }, Time ::= UTCTime | GeneralizedTime
    private static func isValidity(_ element: Element) -> Bool {
        var fields = element.contents
        for _ in 0..<2 {
            guard let tag = fields.peekTag,
                  tag == Tag.utcTime || tag == Tag.generalizedTime,
                  let time = fields.read(tag: tag),
                  time.contentLength > 0
            else { return false }
        }
        return fields.isAtEnd
    }

    /// The bits of a primitive BIT STRING (or an IMPLICIT-tagged one) without
    /// the leading unused-bits byte; nil unless DER-valid (unused bits 0...7,
    /// 0 when empty, padding bits zero).
    private static func bitStringPayload(_ element: Element) -> [UInt8]? {
        let content = element.content
        guard let unusedBits = content.first, unusedBits <= 7 else { return nil }
        let payload = Array(content.dropFirst())
        if let last = payload.last {
            let paddingMask = UInt8((1 << Int(unusedBits)) - 1)
            guard last & paddingMask == 0 else { return nil }
        } else {
            guard unusedBits == 0 else { return nil }
        }
        return payload
    }
}
