/// One parameter of a PostgreSQL statement, sent in binary: bytea, text (UTF-8) or int8.
/// A `nil` in a parameter list is SQL NULL.
package enum PGValue: Sendable {
    /// A bytea value: ciphertext, a blind index, an id, a public key.
    case bytes([UInt8])
    /// A text value (UTF-8).
    case text(String)
    /// A bigint value.
    case int64(Int64)

    /// The type OID libpq is told (bytea 17, text 25, int8 20).
    var typeOID: UInt32 {
        switch self {
        case .bytes: 17
        case .text: 25
        case .int64: 20
        }
    }

    /// The value in PostgreSQL's binary format (int8 big-endian).
    var binary: [UInt8] {
        switch self {
        case .bytes(let b): b
        case .text(let s): Array(s.utf8)
        case .int64(let v): withUnsafeBytes(of: v.bigEndian) { Array($0) }
        }
    }
}
