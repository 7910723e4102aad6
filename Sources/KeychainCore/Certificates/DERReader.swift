/// A strictly bounds-checked reader of DER (X.690) TLVs, shared by the readers of
/// certificates (`DERCertificate`), distinguished names (`DistinguishedName`) and key
/// blobs (`KeyBlob`). It never traps and never reads out of bounds: every length is
/// checked against its parent before anything is sliced.
///
/// DER rules enforced: single-byte tags only, definite lengths only, minimal length
/// encoding (long form only for lengths >= 128, no leading zero length bytes, at most 4
/// length bytes), every length within its parent.
struct DERReader {
    private let bytes: [UInt8]
    private var position: Int
    private let end: Int

    /// A reader over all of `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.position = 0
        self.end = bytes.count
    }

    /// A reader over `bytes[start..<end]`, clamped to the array (only called by
    /// `DERElement.contents`, whose range is already validated).
    fileprivate init(_ bytes: [UInt8], from start: Int, to end: Int) {
        let safeEnd = min(max(end, 0), bytes.count)
        self.bytes = bytes
        self.position = min(max(start, 0), safeEnd)
        self.end = safeEnd
    }

    /// Whether every byte of the window has been read.
    var isAtEnd: Bool { position >= end }

    /// The next identifier octet, if any, without consuming it.
    var peekTag: UInt8? { position < end ? bytes[position] : nil }

    /// Reads the next element and requires its tag to be `tag`.
    mutating func read(tag: UInt8) -> DERElement? {
        guard peekTag == tag else { return nil }
        return readElement()
    }

    /// Reads the next TLV, whatever its tag. Returns nil (without advancing) on anything
    /// malformed or running past the window's end.
    mutating func readElement() -> DERElement? {
        let start = position
        guard start < end else { return nil }
        let tag = bytes[start]
        // High-tag-number form (low five bits all set) never occurs in the walked structures.
        guard tag & 0x1F != 0x1F else { return nil }

        var cursor = start + 1
        guard cursor < end else { return nil }
        let lengthByte = bytes[cursor]
        cursor += 1

        let length: Int
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            // 0x80 is the (BER-only) indefinite form; 0x85... would need more than 4 length bytes.
            let lengthOfLength = Int(lengthByte & 0x7F)
            guard lengthOfLength >= 1, lengthOfLength <= 4,
                lengthOfLength <= end - cursor
            else { return nil }
            // DER: minimal encoding, so no leading zero byte...
            guard bytes[cursor] != 0 else { return nil }
            var value: UInt64 = 0
            for index in cursor..<(cursor + lengthOfLength) {
                value = (value << 8) | UInt64(bytes[index])
            }
            cursor += lengthOfLength
            // ...and the long form only for lengths that do not fit the short form.
            guard value >= 0x80, value <= UInt64(end - cursor) else { return nil }
            length = Int(value)
        }
        guard length <= end - cursor else { return nil }

        position = cursor + length
        return DERElement(bytes: bytes, tag: tag, start: start, contentStart: cursor, end: cursor + length)
    }
}

/// One decoded TLV. Invariant: 0 <= start < contentStart <= end <= bytes.count.
struct DERElement {
    let bytes: [UInt8]
    let tag: UInt8
    let start: Int
    let contentStart: Int
    let end: Int

    /// The number of content octets.
    var contentLength: Int { end - contentStart }
    /// The content octets (without tag and length).
    var content: [UInt8] { Array(bytes[contentStart..<end]) }
    /// The complete encoding (tag, length and content).
    var encoded: [UInt8] { Array(bytes[start..<end]) }
    /// A reader over the content octets.
    var contents: DERReader { DERReader(bytes, from: contentStart, to: end) }

    /// Whether this is a well-formed OBJECT IDENTIFIER's content: non-empty, every
    /// subidentifier minimally encoded (no leading 0x80 byte) and terminated (last byte < 0x80).
    var isObjectIdentifier: Bool {
        guard contentLength > 0, bytes[end - 1] & 0x80 == 0 else { return false }
        var startsSubidentifier = true
        for byte in bytes[contentStart..<end] {
            if startsSubidentifier && byte == 0x80 { return false }
            startsSubidentifier = byte & 0x80 == 0
        }
        return true
    }

    /// An OBJECT IDENTIFIER in dotted form ("2.5.4.3"), or nil when it is malformed or a
    /// subidentifier does not fit 63 bits.
    var dottedObjectIdentifier: String? {
        guard isObjectIdentifier else { return nil }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var bytesInArc = 0
        for byte in bytes[contentStart..<end] {
            bytesInArc += 1
            guard bytesInArc <= 9 else { return nil }   // 9 x 7 bits = 63 bits at most
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                if arcs.isEmpty {
                    // The first subidentifier packs two arcs: 40 * first + second (first <= 2).
                    let first: UInt64 = value < 40 ? 0 : (value < 80 ? 1 : 2)
                    arcs.append(first)
                    arcs.append(value - 40 * first)
                } else {
                    arcs.append(value)
                }
                value = 0
                bytesInArc = 0
            }
        }
        return arcs.map { String($0) }.joined(separator: ".")
    }

    /// The bits of a primitive BIT STRING (or an IMPLICIT-tagged one) without the leading
    /// unused-bits byte; nil unless DER-valid (unused bits 0...7, 0 when empty, padding bits zero).
    var bitStringPayload: [UInt8]? {
        let content = self.content
        guard let unusedBits = content.first, unusedBits <= 7 else { return nil }
        let payload = Array(content.dropFirst())
        if let last = payload.last {
            let paddingMask = UInt8((1 << Int(unusedBits)) - 1)
            guard last & paddingMask == 0 else { return nil }
        } else {
            guard unusedBits == 0 else { return nil }
        }
        return payload
    }
}
