/// One parameter of a PostgreSQL statement, sent in binary: bytea, text (UTF-8), int8, or a
/// one-dimensional array of bytea, text or int8 (for set-based statements over many rows,
/// `unnest($n::bytea[], …)`). A `nil` in a parameter list is SQL NULL.
package enum PGValue: Sendable {
    /// A bytea value: ciphertext, a blind index, an id, a public key.
    case bytes([UInt8])
    /// A text value (UTF-8).
    case text(String)
    /// A bigint value.
    case int64(Int64)
    /// A bytea[] value; a nil element is NULL.
    case byteaArray([[UInt8]?])
    /// A text[] value.
    case textArray([String])
    /// A bigint[] value.
    case int64Array([Int64])

    /// The type OID libpq is told (bytea 17, text 25, int8 20, bytea[] 1001, text[] 1009,
    /// int8[] 1016).
    var typeOID: UInt32 {
        switch self {
        case .bytes: 17
        case .text: 25
        case .int64: 20
        case .byteaArray: 1001
        case .textArray: 1009
        case .int64Array: 1016
        }
    }

    /// The value in PostgreSQL's binary format (int8 big-endian; an array as `array_send`
    /// writes it: dimensions, null flag, element type, then each element's length, -1 for
    /// NULL, and bytes).
    var binary: [UInt8] {
        switch self {
        case .bytes(let b): b
        case .text(let s): Array(s.utf8)
        case .int64(let v): withUnsafeBytes(of: v.bigEndian) { Array($0) }
        case .byteaArray(let elements):
            Self.array(
                elementType: 17, count: elements.count, hasNull: elements.contains { $0 == nil },
                size: elements.reduce(0) { $0 + ($1?.count ?? 0) }
            ) { out in
                for e in elements {
                    guard let e else { Self.put(Int32(-1), &out); continue }
                    Self.put(Int32(e.count), &out)
                    out.append(contentsOf: e)
                }
            }
        case .textArray(let elements):
            Self.array(elementType: 25, count: elements.count, hasNull: false, size: elements.reduce(0) { $0 + $1.utf8.count }) { out in
                for e in elements {
                    Self.put(Int32(e.utf8.count), &out)
                    out.append(contentsOf: e.utf8)
                }
            }
        case .int64Array(let elements):
            Self.array(elementType: 20, count: elements.count, hasNull: false, size: 8 * elements.count) { out in
                for e in elements {
                    Self.put(Int32(8), &out)
                    Self.put(e, &out)
                }
            }
        }
    }

    /// A one-dimensional array's header (a zero-dimensional one when empty), then what
    /// `elements` appends; `size` is the elements' bytes without their length words.
    private static func array(elementType: Int32, count: Int, hasNull: Bool, size: Int, _ elements: (inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(20 + 4 * count + size)
        put(Int32(count == 0 ? 0 : 1), &out)
        put(Int32(hasNull ? 1 : 0), &out)
        put(elementType, &out)
        if count > 0 {
            put(Int32(count), &out)
            put(Int32(1), &out)   // lower bound
        }
        elements(&out)
        return out
    }

    /// Appends `v` big-endian.
    private static func put<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }
}
