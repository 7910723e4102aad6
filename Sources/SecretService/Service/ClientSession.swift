/// A session a client opened with `OpenSession`: how secrets travel to and from it.
/// Sessions belong to the client that opened them and close when it leaves the bus.
package final class ClientSession {
    /// The path element after `/session/`.
    package let id: String
    /// The unique bus name of the client that opened it.
    package let owner: String
    /// nil for `plain`; the negotiated cipher for `dh-ietf1024-sha256-aes128-cbc-pkcs7`.
    package let cipher: SessionCipher?

    package init(id: String, owner: String, cipher: SessionCipher?) {
        self.id = id
        self.owner = owner
        self.cipher = cipher
    }

    /// The `(oayays)` Secret structure carrying `secret` to the client.
    package func wrap(_ secret: [UInt8], contentType: String) throws(BusError) -> BusValue {
        let path = ObjectPath.session(id).text
        guard let cipher else {
            return .structure([.objectPath(path), .bytes([]), .bytes(secret), .string(contentType)])
        }
        let sealed = try cipher.encrypt(secret)
        return .structure([.objectPath(path), .bytes(sealed.parameters), .bytes(sealed.value), .string(contentType)])
    }

    /// The secret and content type in a Secret structure from the client.
    package func unwrap(_ value: BusValue) throws(BusError) -> (secret: [UInt8], contentType: String) {
        guard case .structure(let fields) = value, fields.count == 4, fields[0].objectPath != nil,
            let parameters = fields[1].byteArray, let bytes = fields[2].byteArray, let contentType = fields[3].string
        else {
            throw .invalidArgs("a secret is (o session, ay parameters, ay value, s content_type)")
        }
        guard let cipher else {
            guard parameters.isEmpty else { throw .invalidArgs("a plain session's secret has no parameters") }
            return (bytes, contentType)
        }
        return (try cipher.decrypt(parameters: parameters, value: bytes), contentType)
    }
}
