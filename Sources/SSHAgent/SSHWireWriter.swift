import KeychainCore

/// Writes the SSH wire encoding (RFC 4251 §5): the inverse of `SSHWireReader`. Its buffer
/// may hold a private key: `wipe()` it when done.
///
///     var writer = SSHWireWriter()
///     writer.string("ssh-ed25519")
///     writer.string(publicKey)
public struct SSHWireWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// One byte.
    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// A `boolean`.
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A big-endian `uint32`.
    public mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A `string` of bytes.
    public mutating func string<C: Collection>(_ value: C) where C.Element == UInt8 {
        uint32(UInt32(value.count))
        bytes += value
    }

    /// A `string` of UTF-8 text.
    public mutating func string(_ value: String) { string(Array(value.utf8)) }

    /// An `mpint` from a non-negative big-endian magnitude: leading zeros dropped, a zero
    /// byte added when the high bit is set.
    public mutating func mpint(magnitude: [UInt8]) {
        let digits = magnitude.drop(while: { $0 == 0 })
        if let first = digits.first, first & 0x80 != 0 {
            uint32(UInt32(digits.count + 1))
            bytes.append(0)
        } else {
            uint32(UInt32(digits.count))
        }
        bytes += digits
    }

    /// Raw bytes, unframed.
    public mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 { bytes += value }

    /// Overwrites the buffer with zeros and empties it.
    public mutating func wipe() { Sodium.wipe(&bytes) }
}
