/// A private key as the agent holds it: the SSH wire form of its private part (as in
/// `SSH2_AGENTC_ADD_IDENTITY`, draft-miller-ssh-agent §4.2.3, without the comment) in
/// guarded memory (`SecretBytes`), and its public blob. The wire form is what
/// `SSHIdentitySource.privateKey(for:)` gives too.
///
///     let key = try SigningKey(wire: bytes)   // checks every field
///     let signature = try key.sign(data, flags: 0)
public final class SigningKey: Sendable {
    /// The key's type.
    public let type: AgentKeyType
    /// The public key blob (`string type`, then the public fields).
    public let publicBlob: [UInt8]
    /// The private wire form, wiped when the key goes.
    let secret: SecretBytes

    /// Decodes a whole private wire form (nothing may follow it).
    /// - Throws: `SSHWireError` when it is malformed or of a type the agent does not sign with.
    public convenience init(wire: [UInt8]) throws {
        var reader = SSHReader(wire)
        try self.init(reading: &reader)
        guard reader.isAtEnd else { throw SSHWireError("bytes after the private key") }
    }

    /// Decodes a private wire form at the reader's position, leaving the reader after it
    /// (an add request's comment and constraints follow).
    public init(reading reader: inout SSHReader) throws {
        let start = reader.offset
        guard let type = AgentKeyType(name: try reader.string()) else { throw SSHWireError("a key type the agent does not handle") }
        self.type = type
        var blob = SSHWriter()
        blob.text(type.rawValue)
        switch type {
        case .ed25519:
            let a = try reader.string()
            var ka = try reader.string()
            defer { SecretBytes.wipe(&ka) }
            guard a.count == 32, ka.count == 64, Array(ka[32...]) == a else { throw SSHWireError("a malformed Ed25519 key") }
            blob.string(a)
        case .ecdsaP256, .ecdsaP384:
            guard try reader.text() == type.curveName else { throw SSHWireError("an ECDSA key whose curve is not its type's") }
            let q = try reader.string()
            var d = try reader.mpint()
            defer { SecretBytes.wipe(&d) }
            guard q.count == 1 + 2 * type.scalarBytes, q.first == 4, !d.isEmpty, d.count <= type.scalarBytes else {
                throw SSHWireError("a malformed ECDSA key")
            }
            blob.text(type.curveName ?? "")
            blob.string(q)
        case .rsa:
            let n = try reader.mpint()
            let e = try reader.mpint()
            var fields = [try reader.mpint(), try reader.mpint(), try reader.mpint(), try reader.mpint()]   // d iqmp p q
            defer { for i in fields.indices { SecretBytes.wipe(&fields[i]) } }
            // OpenSSH's own bounds: 1024 to 16384 bits.
            guard n.count * 8 >= 1024, n.count * 8 <= 16384, !e.isEmpty, e.count <= 8, fields.allSatisfy({ !$0.isEmpty }) else {
                throw SSHWireError("a malformed or too small RSA key")
            }
            blob.mpint(e)
            blob.mpint(n)
        }
        publicBlob = blob.bytes
        secret = SecretBytes(reader.bytes[start..<reader.offset])
        guard secret.isValid else { throw SSHWireError("no memory for the key") }
    }

    /// Calls `body` with a reader over the private wire form, wiping the copy afterwards.
    func withFields<R>(_ body: (inout SSHReader) throws -> R) throws -> R {
        var copy = secret.withBytes { Array($0) }
        defer { SecretBytes.wipe(&copy) }
        // The reader ends inside the closure, so `copy` is the buffer's only owner again
        // when it is wiped (a shared buffer would be copied, not wiped).
        return try { () throws -> R in
            var reader = SSHReader(copy)
            _ = try reader.string()   // the type
            return try body(&reader)
        }()
    }
}
