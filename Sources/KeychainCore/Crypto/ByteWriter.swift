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
    /// Appends the bytes of a buffer as they are (a secret's, without an array copy).
    package mutating func raw(_ b: UnsafeRawBufferPointer) { bytes.append(contentsOf: b) }

    /// A u32 length followed by the bytes.
    package mutating func lengthPrefixed(_ b: [UInt8]) {
        u32(UInt32(b.count))
        bytes.append(contentsOf: b)
    }

    /// A one-byte length followed by an ASCII label (domain separation).
    package mutating func label(_ s: String) {
        let utf8 = Array(s.utf8)
        u8(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Wipes the buffer.
    package mutating func wipe() { Sodium.wipe(&bytes) }
}
