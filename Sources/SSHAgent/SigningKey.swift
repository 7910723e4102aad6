import KeychainCore

/// A private key as the agent holds it: the SSH wire form of its private part (as in
/// `SSH2_AGENTC_ADD_IDENTITY`, draft-miller-ssh-agent §4.2.3, without the comment) in
/// guarded memory (`SecureBytes`, libsodium's guarded heap), and its public blob. The wire form is what
/// `SSHIdentitySource.privateKey(for:)` gives too, and what kc stores (`SSHPrivateKey`,
/// whose reader checks it here: one decoder, one set of rules for every key kc signs with).
///
///     let key = try SigningKey(wire: bytes)   // checks every field
///     let signature = try key.sign(data, flags: 0)
///
/// Sendable: the guarded buffer is written once, in `init`, and only read afterwards.
public final class SigningKey: @unchecked Sendable {
    /// The key's type.
    public let type: SSHKeyType
    /// The public key blob (`string type`, then the public fields).
    public let publicBlob: [UInt8]
    /// The private wire form, wiped when the key goes.
    let secret: SecureBytes

    /// Decodes a whole private wire form (nothing may follow it).
    /// - Parameter checkingHalves: false skips libcrypto's check that an ECDSA or RSA key's
    ///   halves belong together: for a key kc stored, checked when it was added.
    /// - Throws: what `SSHPrivateKey` throws for a malformed key or one of a type or size
    ///   kc does not sign with.
    public convenience init(wire: [UInt8], checkingHalves: Bool = true) throws {
        var reader = SSHWireReader(wire, context: "the SSH private key")
        try self.init(reading: &reader, checkingHalves: checkingHalves)
        guard reader.isAtEnd else { throw reader.malformed("bytes follow the key") }
    }

    /// Decodes a private wire form at the reader's position, leaving the reader after it
    /// (an add request's comment and constraints follow).
    public init(reading reader: inout SSHWireReader, checkingHalves: Bool = true) throws {
        var key = try SSHPrivateKey.read(&reader, checkingHalves: checkingHalves)
        defer { key.wipe() }
        type = key.type
        publicBlob = key.publicBlob
        secret = try SecureBytes(copying: key.wire, guarded: true)
    }

    /// Calls `body` with a reader over the private wire form, wiping the copy afterwards.
    func withFields<R>(_ body: (inout SSHWireReader) throws -> R) throws -> R {
        var copy = secret.withUnsafeBytes { Array($0) }
        defer { Sodium.wipe(&copy) }
        // The reader ends inside the closure, so `copy` is the buffer's only owner again
        // when it is wiped (a shared buffer would be copied, not wiped).
        return try { () throws -> R in
            var reader = SSHWireReader(copy)
            _ = try reader.string()   // the type
            return try body(&reader)
        }()
    }
}
