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
        var top = DERReader(der)
        guard let certificate = top.read(tag: Tag.sequence), top.isAtEnd else { return nil }

        var certificateFields = certificate.contents
        guard let tbsCertificate = certificateFields.read(tag: Tag.sequence),
            let signatureAlgorithm = certificateFields.read(tag: Tag.sequence),
            Self.isAlgorithmIdentifier(signatureAlgorithm),
            let signature = certificateFields.read(tag: Tag.bitString),
            signature.bitStringPayload != nil,
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
            let publicKeyBytes = subjectPublicKey.bitStringPayload,
            keyInfoFields.isAtEnd
        else { return nil }

        // issuerUniqueID [1] IMPLICIT BIT STRING OPTIONAL (primitive, as DER requires)
        if tbs.peekTag == Tag.issuerUniqueID {
            guard let uniqueID = tbs.read(tag: Tag.issuerUniqueID),
                uniqueID.bitStringPayload != nil
            else { return nil }
        }
        // subjectUniqueID [2] IMPLICIT BIT STRING OPTIONAL
        if tbs.peekTag == Tag.subjectUniqueID {
            guard let uniqueID = tbs.read(tag: Tag.subjectUniqueID),
                uniqueID.bitStringPayload != nil
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
                    extnID.isObjectIdentifier
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
        static let versionTag: UInt8 = 0xA0   // [0] constructed (EXPLICIT)
        static let issuerUniqueID: UInt8 = 0x81   // [1] primitive (IMPLICIT BIT STRING)
        static let subjectUniqueID: UInt8 = 0x82   // [2] primitive (IMPLICIT BIT STRING)
        static let extensionsTag: UInt8 = 0xA3   // [3] constructed (EXPLICIT)
    }

    /// AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }
    private static func isAlgorithmIdentifier(_ element: DERElement) -> Bool {
        var fields = element.contents
        guard let algorithm = fields.read(tag: Tag.objectIdentifier),
            algorithm.isObjectIdentifier
        else { return false }
        if !fields.isAtEnd {
            guard fields.readElement() != nil else { return false }
        }
        return fields.isAtEnd
    }

    /// Name ::= SEQUENCE OF RelativeDistinguishedName
    /// RelativeDistinguishedName ::= SET SIZE (1..MAX) OF SEQUENCE { type OID, value ANY }
    /// (the element's own SEQUENCE tag is checked by the caller).
    private static func isName(_ element: DERElement) -> Bool {
        var relativeNames = element.contents
        while !relativeNames.isAtEnd {
            guard let relativeName = relativeNames.read(tag: Tag.set) else { return false }
            var attributes = relativeName.contents
            guard !attributes.isAtEnd else { return false }
            while !attributes.isAtEnd {
                guard let attribute = attributes.read(tag: Tag.sequence) else { return false }
                var fields = attribute.contents
                guard let type = fields.read(tag: Tag.objectIdentifier),
                    type.isObjectIdentifier,
                    fields.readElement() != nil,
                    fields.isAtEnd
                else { return false }
            }
        }
        return true
    }

    /// Validity ::= SEQUENCE { notBefore Time, notAfter Time }, Time ::= UTCTime | GeneralizedTime
    private static func isValidity(_ element: DERElement) -> Bool {
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
}
