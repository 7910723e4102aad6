import KeychainCore

/// The names kc prints for attributes (text and JSON output, `docs/commands.md`).
package enum AttributeNames {
    package static let byKey: [String: String] = [
        kSecAttrAccount: "account", kSecAttrService: "service", kSecAttrServer: "server", kSecAttrLabel: "label",
        kSecAttrDescription: "kind", kSecAttrComment: "comment", kSecAttrGeneric: "generic", kSecAttrCreator: "creator",
        kSecAttrType: "type", kSecAttrSecurityDomain: "security-domain", kSecAttrPath: "path", kSecAttrPort: "port",
        kSecAttrProtocol: "protocol", kSecAttrAuthenticationType: "auth-type", kSecAttrCreationDate: "created",
        kSecAttrModificationDate: "modified", kSecAttrAccessible: "accessible", kSecAttrAccessGroup: "access-group",
        kSecAttrSynchronizable: "synchronizable", kSecAttrIsInvisible: "invisible", kSecAttrIsNegative: "negative",
        kSecAttrApplicationTag: "tag", kSecAttrApplicationLabel: "application-label", kSecAttrKeyClass: "key-class",
        kSecAttrKeySizeInBits: "key-size", kSecAttrEffectiveKeySize: "effective-key-size", kSecAttrIssuer: "issuer",
        kSecAttrSerialNumber: "serial-number", kSecAttrSubject: "subject", kSecAttrPublicKeyHash: "public-key-hash",
        kSecAttrSubjectKeyID: "subject-key-id", kSecAttrCertificateType: "certificate-type",
        kSecAttrCertificateEncoding: "certificate-encoding", kSecAttrStartDate: "start-date", kSecAttrEndDate: "end-date",
        "alis": "alias", kSecAttrIsPermanent: "permanent", kSecAttrIsPrivate: "private", kSecAttrIsModifiable: "modifiable",
        kSecAttrIsSensitive: "sensitive", kSecAttrWasAlwaysSensitive: "always-sensitive", kSecAttrIsExtractable: "extractable",
        kSecAttrWasNeverExtractable: "never-extractable", kSecAttrCanEncrypt: "can-encrypt", kSecAttrCanDecrypt: "can-decrypt",
        kSecAttrCanDerive: "can-derive", kSecAttrCanSign: "can-sign", kSecAttrCanVerify: "can-verify",
        kSecAttrCanSignRecover: "can-sign-recover", kSecAttrCanVerifyRecover: "can-verify-recover",
        kSecAttrCanWrap: "can-wrap", kSecAttrCanUnwrap: "can-unwrap",
        kcAttrSecretServiceAttributes: "secret-service-attributes", kcAttrContentType: "content-type",
        kcAttrAccessControlFlags: "access-control"
    ]

    /// Printing order, text and JSON alike (docs/commands.md, "Text output"): these first,
    /// in this order, then every other attribute in alphabetical order of its name.
    package static let leading = [
        "service", "server", "account", "label", "kind", "comment", "generic", "security-domain",
        "protocol", "port", "path", "auth-type", "tag", "creator", "type", "created", "modified"
    ]

    /// (name, value) pairs in printing order.
    package static func ordered(_ attributes: [String: Any]) -> [(String, Any)] {
        let named = attributes.map { (byKey[$0.key] ?? $0.key, $0.value) }
        let rank = Dictionary(uniqueKeysWithValues: leading.enumerated().map { ($1, $0) })
        return named.sorted { a, b in
            let ra = rank[a.0] ?? Int.max, rb = rank[b.0] ?? Int.max
            return ra != rb ? ra < rb : a.0 < b.0
        }
    }
}
