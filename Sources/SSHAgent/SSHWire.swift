/// Why bytes from an SSH agent client could not be read (draft-miller-ssh-agent §3: every
/// field is length-prefixed; a length past the end of the message is malformed).
public struct SSHWireError: Error, Sendable, Equatable {
    /// What was wrong, for a log line; never contains the bytes themselves.
    public let reason: String
    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }
}

/// Reads the SSH wire types (RFC 4251 §5: byte, boolean, uint32, string, mpint) from a
/// message, checking every length against what is left. Nothing here traps on input.
///
///     var reader = SSHReader(payload)
///     let type = try reader.byte()
///     let blob = try reader.string()
public struct SSHReader: Sendable {
    /// The message being read.
    public let bytes: [UInt8]
    /// Where the next field starts.
    public private(set) var offset: Int

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
    }

    /// A reader over part of a message.
    public init<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        self.init(Array(bytes))
    }

    /// How many bytes are left.
    public var remaining: Int { bytes.count - offset }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// One byte. - Throws: `SSHWireError` at the end.
    public mutating func byte() throws -> UInt8 {
        guard remaining >= 1 else { throw SSHWireError("truncated byte") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A boolean (any non-zero byte is true, RFC 4251 §5).
    public mutating func bool() throws -> Bool { try byte() != 0 }

    /// A big-endian uint32.
    public mutating func uint32() throws -> UInt32 {
        guard remaining >= 4 else { throw SSHWireError("truncated uint32") }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    /// A string: uint32 length, then that many bytes.
    public mutating func string() throws -> [UInt8] {
        let length = Int(try uint32())
        guard length <= remaining else { throw SSHWireError("string of \(length) bytes past the end") }
        defer { offset += length }
        return Array(bytes[offset..<(offset + length)])
    }

    /// A string that must be UTF-8 text (names, comments).
    public mutating func text() throws -> String {
        let raw = try string()
        guard let text = String(validating: raw, as: UTF8.self) else { throw SSHWireError("text that is not UTF-8") }
        return text
    }

    /// An mpint's magnitude (RFC 4251 §5), big-endian without leading zeros; negative
    /// numbers are refused (no key field is negative).
    public mutating func mpint() throws -> [UInt8] {
        let raw = try string()
        guard let first = raw.first else { return [] }
        guard first & 0x80 == 0 else { throw SSHWireError("negative mpint") }
        return Array(raw.drop(while: { $0 == 0 }))
    }

    /// The rest of the message.
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Writes the SSH wire types.
public struct SSHWriter: Sendable {
    /// What was written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty message.
    public init() {}

    /// One byte.
    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// A boolean.
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A big-endian uint32.
    public mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// A string (length-prefixed bytes).
    public mutating func string<C: Collection>(_ value: C) where C.Element == UInt8 {
        uint32(UInt32(value.count))
        bytes += value
    }

    /// A string of UTF-8 text.
    public mutating func text(_ value: String) { string(Array(value.utf8)) }

    /// An mpint from a non-negative big-endian magnitude: leading zeros dropped, a zero
    /// byte added when the top bit is set.
    public mutating func mpint<C: Collection>(_ magnitude: C) where C.Element == UInt8 {
        let trimmed = Array(magnitude.drop(while: { $0 == 0 }))
        if let first = trimmed.first, first & 0x80 != 0 {
            string([0] + trimmed)
        } else {
            string(trimmed)
        }
    }

    /// Raw bytes, no length.
    public mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 { bytes += value }
}
