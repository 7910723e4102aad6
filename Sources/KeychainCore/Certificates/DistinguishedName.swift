/// An X.501 Name (a certificate's issuer or subject, as kSecAttrIssuer and kSecAttrSubject
/// hold it: the DER of the Name SEQUENCE) written as text, the way RFC 4514 writes it:
///
///     DistinguishedName.string(der: subject)   // "CN=kc RSA v3 Test, O=kc Test, C=US"
///
/// - The relative names in reverse order (the most specific first), separated by ", " (RFC
///   4514 uses a bare ","; the space reads better and changes nothing else), the attributes
///   of a multi-valued one joined by "+".
/// - Common attribute types by their short names (CN, O, OU, C, L, ST, emailAddress…);
///   any other type as its dotted OID with the value as `#` and the hex of its DER, as
///   RFC 4514 §2.4 says.
/// - A value that is not a string type kc can read (or not valid in its encoding) as `#`
///   and the hex of its DER, too.
/// - RFC 4514 escaping: `"` `+` `,` `;` `<` `>` `\` with a backslash, a leading space or `#`
///   and a trailing space likewise, and every control character (C0, DEL, C1; NUL among
///   them) as `\` and the hex of each of its UTF-8 bytes, so the text never holds one.
///
/// The bytes come from the item, which anyone who can write to the keychain chooses: the
/// reader is `DERReader`'s (bounds-checked, no recursion), and anything that is not a
/// well-formed Name gives nil, never a trap. FuzzTargets' `der` target drives it.
package enum DistinguishedName {
    /// The text form of a DER-encoded Name, or nil when the bytes are not exactly one
    /// well-formed Name.
    package static func string(der: [UInt8]) -> String? {
        var top = DERReader(der)
        guard let name = top.read(tag: 0x30), top.isAtEnd else { return nil }
        var relativeNames = name.contents
        var parts: [String] = []
        while !relativeNames.isAtEnd {
            // RelativeDistinguishedName ::= SET SIZE (1..MAX) OF AttributeTypeAndValue
            guard let relativeName = relativeNames.read(tag: 0x31) else { return nil }
            var attributes = relativeName.contents
            guard !attributes.isAtEnd else { return nil }
            var values: [String] = []
            while !attributes.isAtEnd {
                // AttributeTypeAndValue ::= SEQUENCE { type OBJECT IDENTIFIER, value ANY }
                guard let attribute = attributes.read(tag: 0x30) else { return nil }
                var fields = attribute.contents
                guard let type = fields.read(tag: 0x06), let oid = type.dottedObjectIdentifier,
                    let value = fields.readElement(), fields.isAtEnd
                else { return nil }
                values.append(text(type: oid, value: value))
            }
            parts.append(values.joined(separator: "+"))
        }
        return parts.reversed().joined(separator: ", ")
    }

    /// The short names of the attribute types people see in certificates (RFC 4514 §3, RFC
    /// 4519, PKCS #9, and the EV jurisdiction types), by dotted OID.
    static let shortNames: [String: String] = [
        "2.5.4.3": "CN", "2.5.4.4": "SN", "2.5.4.5": "serialNumber", "2.5.4.6": "C", "2.5.4.7": "L",
        "2.5.4.8": "ST", "2.5.4.9": "STREET", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.12": "title",
        "2.5.4.15": "businessCategory", "2.5.4.17": "postalCode", "2.5.4.42": "GN", "2.5.4.43": "initials",
        "2.5.4.44": "generationQualifier", "2.5.4.46": "dnQualifier", "2.5.4.65": "pseudonym",
        "2.5.4.97": "organizationIdentifier",
        "0.9.2342.19200300.100.1.1": "UID", "0.9.2342.19200300.100.1.25": "DC",
        "1.2.840.113549.1.9.1": "emailAddress",
        "1.3.6.1.4.1.311.60.2.1.1": "jurisdictionL", "1.3.6.1.4.1.311.60.2.1.2": "jurisdictionST",
        "1.3.6.1.4.1.311.60.2.1.3": "jurisdictionC"
    ]

    /// One `TYPE=value`.
    private static func text(type oid: String, value: DERElement) -> String {
        guard let short = shortNames[oid] else { return oid + "=#" + hex(value.encoded) }
        guard let decoded = decodedString(value) else { return short + "=#" + hex(value.encoded) }
        return short + "=" + escaped(decoded)
    }

    /// The text of a directory string value, or nil for a type kc does not read as text or
    /// bytes not valid in the type's encoding.
    static func decodedString(_ value: DERElement) -> String? {
        let content = value.content
        switch value.tag {
        case 0x0C, 0x12, 0x13, 0x16, 0x1A:
            // UTF8String; NumericString, PrintableString, IA5String and VisibleString are
            // ASCII subsets, read as UTF-8 so a mislabelled UTF-8 value still reads.
            return String(validating: content, as: UTF8.self)
        case 0x14:
            // TeletexString: in practice Latin-1, as OpenSSL reads it.
            var s = ""
            s.unicodeScalars.append(contentsOf: content.map { Unicode.Scalar($0) })
            return s
        case 0x1E:
            // BMPString: UTF-16 big-endian.
            guard content.count % 2 == 0 else { return nil }
            let units = stride(from: 0, to: content.count, by: 2).map { UInt16(content[$0]) << 8 | UInt16(content[$0 + 1]) }
            return String(validating: units, as: UTF16.self)
        case 0x1C:
            // UniversalString: UTF-32 big-endian.
            guard content.count % 4 == 0 else { return nil }
            var s = ""
            for i in stride(from: 0, to: content.count, by: 4) {
                let v = UInt32(content[i]) << 24 | UInt32(content[i + 1]) << 16 | UInt32(content[i + 2]) << 8 | UInt32(content[i + 3])
                guard let scalar = Unicode.Scalar(v) else { return nil }
                s.unicodeScalars.append(scalar)
            }
            return s
        default:
            return nil
        }
    }

    /// RFC 4514 §2.4 escaping, and every control character as hex pairs.
    static func escaped(_ value: String) -> String {
        let scalars = Array(value.unicodeScalars)
        var out = ""
        for (i, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"", "+", ",", ";", "<", ">", "\\":
                out += "\\"
                out.unicodeScalars.append(scalar)
            case " " where i == 0 || i == scalars.count - 1, "#" where i == 0:
                out += "\\"
                out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    for byte in String(scalar).utf8 { out += "\\" + hex([byte]).uppercased() }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Lower-case hex digits.
    private static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }
}
