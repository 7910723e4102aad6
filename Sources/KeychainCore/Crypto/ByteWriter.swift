/// Builds the fixed, length-unambiguous byte layouts of `docs/format.md`: big-endian
/// integers, length-prefixed byte strings and 4-character codes.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    package mutating func u8(_ v: UInt8) { bytes.append(v) }

    package mutating func u32(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    package mutating func u64(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    /// Raw bytes with no length (only for fixed-width fields).
    package mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// A u32 length followed by the bytes.
    package mutating func lengthPrefixed(_ b: [UInt8]) {
        u32(UInt32(b.count))
        bytes.append(contentsOf: b)
    }

    /// A one-byte length followed by an ASCII label (domain separation).
    mutating func label(_ s: String) {
        let utf8 = Array(s.utf8)
        u8(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Wipes the buffer.
    package mutating func wipe() { Sodium.wipe(&bytes) }
}

/// Reads what `ByteWriter` wrote, never past the end: every read returns nil on a short input.
package struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var isAtEnd: Bool { offset == bytes.count }

    /// Bytes not read yet.
    package var remaining: Int { bytes.count - offset }

    package mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func u32() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return v
    }

    package mutating func u64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return v
    }

    mutating func raw(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    package mutating func lengthPrefixed(max: Int = Int(Int32.max)) -> [UInt8]? {
        guard let n = u32(), Int(n) <= max else { return nil }
        return raw(Int(n))
    }
}
