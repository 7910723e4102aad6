import KeychainCore

/// Reads the SSH wire encoding (RFC 4251 §5: `byte`, `boolean`, `uint32`, `string`,
/// `mpint`) from untrusted bytes (a key file, an agent client's message), every length
/// checked against what is left, so a crafted input gives an error and never a crash.
///
///     var reader = SSHWireReader(blob)
///     let type = try reader.text()        // "ssh-ed25519"
///     let key = try reader.string()       // 32 bytes
///
/// - Throws: errSecDecode (`SSHWireReader.malformed`) when a field runs past the end.
public struct SSHWireReader: Sendable {
    /// The bytes read.
    public let bytes: [UInt8]
    /// Where the next field starts.
    public private(set) var offset: Int
    /// What an error names as the thing being read ("the key file").
    public var context: String

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8], context: String = "the SSH key") {
        self.bytes = bytes
        self.offset = 0
        self.context = context
    }

    /// A reader over part of a message.
    public init<S: Sequence>(_ bytes: S, context: String = "the SSH key") where S.Element == UInt8 {
        self.init(Array(bytes), context: context)
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// How many bytes are left.
    public var remaining: Int { bytes.count - offset }

    /// The error for a malformed field.
    public func malformed(_ what: String) -> KeychainError {
        KeychainError(errSecDecode, "\(context) is malformed: \(what)")
    }

    /// `count` raw bytes.
    public mutating func raw(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= remaining else { throw malformed("a field runs past the end") }
        let out = Array(bytes[offset..<(offset + count)])
        offset += count
        return out
    }

    /// One byte.
    public mutating func byte() throws -> UInt8 {
        guard remaining >= 1 else { throw malformed("a byte runs past the end") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A `boolean` (any non-zero byte is true).
    public mutating func bool() throws -> Bool { try byte() != 0 }

    /// A big-endian `uint32`.
    public mutating func uint32() throws -> UInt32 {
        guard remaining >= 4 else { throw malformed("a number runs past the end") }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    /// A `string`: a `uint32` length and that many bytes.
    public mutating func string() throws -> [UInt8] {
        let length = try uint32()
        guard Int(length) <= remaining else { throw malformed("a field of \(length) bytes runs past the end") }
        return try raw(Int(length))
    }

    /// A `string` holding UTF-8 text (a key type, a curve, a comment).
    public mutating func text() throws -> String {
        let raw = try string()
        guard let text = String(validating: raw, as: UTF8.self) else { throw malformed("a name is not UTF-8") }
        return text
    }

    /// An `mpint` that must be positive, as the magnitude without leading zeros (RFC 4251 §5:
    /// two's complement, no needless leading byte).
    public mutating func positiveMPInt() throws -> [UInt8] {
        var raw = try string()
        defer { Sodium.wipe(&raw) }   // a private key's d, p, q: no copy left behind
        guard let first = raw.first else { throw malformed("a number is zero") }
        guard first & 0x80 == 0 else { throw malformed("a number is negative") }
        if first == 0 {
            guard raw.count > 1, raw[1] & 0x80 != 0 else { throw malformed("a number has a needless leading zero") }
            return Array(raw.dropFirst())
        }
        return raw
    }

    /// An `mpint` that must not be negative, as its magnitude without leading zeros (empty
    /// for zero), leniently: a needless leading zero is passed over. For the numbers of a
    /// signature or a public key met in a message; a private key's fields are read with
    /// `positiveMPInt`.
    public mutating func mpint() throws -> [UInt8] {
        let raw = try string()
        guard let first = raw.first else { return [] }
        guard first & 0x80 == 0 else { throw malformed("a number is negative") }
        return Array(raw.drop(while: { $0 == 0 }))
    }

    /// The rest of the bytes.
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}
