/// Reads what `ByteWriter` wrote, never past the end: every read returns nil on a short input.
package struct ByteReader {
    private let bytes: [UInt8]
    package private(set) var offset = 0

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

    package mutating func raw(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    package mutating func lengthPrefixed(max: Int = Int(Int32.max)) -> [UInt8]? {
        guard let n = u32(), Int(n) <= max else { return nil }
        return raw(Int(n))
    }
}
