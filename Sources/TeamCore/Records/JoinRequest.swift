import KeychainCore

/// What `kc team join` leaves on the server for an admin: the device's public keys and the
/// name it suggests, signed with its own key. The admin trusts none of it until the
/// fingerprint computed from the keys equals the one the device printed, compared out of
/// band: a server that substitutes keys changes the fingerprint.
package struct JoinRequest: Equatable, Sendable {
    package var name: String
    package var boxPublicKey: [UInt8]
    package var signPublicKey: [UInt8]
    package var signature: [UInt8]

    /// A request for `keys`, signed by them, for the keychain `keychainID`.
    package init(name: String, keys: MemberKeys, keychainID: [UInt8]) {
        self.name = name
        boxPublicKey = keys.boxPublicKey
        signPublicKey = keys.signPublicKey
        signature = []
        signature = keys.sign(signedBytes(keychainID: keychainID))
    }

    private init(name: String, box: [UInt8], sign: [UInt8], signature: [UInt8]) {
        self.name = name
        boxPublicKey = box
        signPublicKey = sign
        self.signature = signature
    }

    func signedBytes(keychainID: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 160)
        w.label("kc team join request v1")
        w.lengthPrefixed(keychainID)
        w.lengthPrefixed(Array(name.utf8))
        w.lengthPrefixed(boxPublicKey)
        w.lengthPrefixed(signPublicKey)
        return w.bytes
    }

    /// The fingerprint of the keys it carries.
    package var fingerprint: String { MemberKeys.fingerprint(boxPublicKey: boxPublicKey, signPublicKey: signPublicKey) }

    /// Whether the keys signed the request (for this keychain).
    package func isSelfSigned(keychainID: [UInt8]) -> Bool {
        MemberKeys.verify(signature: signature, message: signedBytes(keychainID: keychainID), publicKey: signPublicKey)
    }

    /// Its stored bytes.
    package var encoded: [UInt8] {
        var w = ByteWriter(capacity: 200)
        w.lengthPrefixed(Array(name.utf8))
        w.lengthPrefixed(boxPublicKey)
        w.lengthPrefixed(signPublicKey)
        w.lengthPrefixed(signature)
        return w.bytes
    }

    /// Reads stored bytes. - Throws: errSecDecode.
    package init(encoded bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        guard let n = r.lengthPrefixed(max: 256), let name = String(validating: n, as: UTF8.self),
            let box = r.lengthPrefixed(max: 32), let sign = r.lengthPrefixed(max: 32), let sig = r.lengthPrefixed(max: 64),
            r.isAtEnd, box.count == 32, sign.count == 32, sig.count == 64
        else {
            throw KeychainError(errSecDecode, "the join request on the server is malformed")
        }
        self.init(name: name, box: box, sign: sign, signature: sig)
    }
}
