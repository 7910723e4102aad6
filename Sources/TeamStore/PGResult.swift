import CPostgres
import KeychainCore

/// The rows of one PostgreSQL answer, copied out of libpq's result and decoded from the
/// binary format when it arrives (int2, int4, int8, bytea, text): nothing of libpq's
/// memory outlives the call, and a malformed answer is an error there (errSecIO), never
/// a crash later.
package struct PGResult: Sendable {
    /// The number of rows returned.
    package let rowCount: Int
    /// The number of rows an INSERT, UPDATE or DELETE changed (`PQcmdTuples`), 0 for others.
    package let affectedRows: Int
    /// The values, row by row; nil is SQL NULL.
    private let cells: [[PGValue?]]

    /// An answer with these rows (for a result that carries none).
    init(rows: [[PGValue?]], affectedRows: Int) {
        cells = rows
        rowCount = rows.count
        self.affectedRows = affectedRows
    }

    /// Copies and decodes libpq's `result` (which the caller still owns and clears).
    /// - Throws: errSecIO for a column of a type kc never reads or a value of the wrong size.
    init(copying result: OpaquePointer) throws {
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        var decoded: [[PGValue?]] = []
        decoded.reserveCapacity(rows)
        for r in 0..<rows {
            var row: [PGValue?] = []
            row.reserveCapacity(columns)
            for c in 0..<columns {
                if PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                    row.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, Int32(r), Int32(c)))
                var bytes: [UInt8] = []
                if length > 0, let p = PQgetvalue(result, Int32(r), Int32(c)) {
                    bytes = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(p), count: length))
                }
                guard bytes.count == length else { throw Self.malformed("a value shorter than announced") }
                if PQfformat(result, Int32(c)) != 1 {
                    // Only an empty result set comes in text format (no columns to read).
                    throw Self.malformed("a value in text format")
                }
                row.append(try Self.decode(bytes, type: PQftype(result, Int32(c))))
            }
            decoded.append(row)
        }
        cells = decoded
        rowCount = rows
        affectedRows = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }

    /// A binary value of type `oid` as a `PGValue`.
    static func decode(_ bytes: [UInt8], type oid: Oid) throws -> PGValue {
        switch oid {
        case 17:   // bytea
            return .bytes(bytes)
        case 25, 1043, 19:   // text, varchar, name
            return .text(String(decoding: bytes, as: UTF8.self))
        case 20, 23, 21:   // int8, int4, int2
            let size = oid == 20 ? 8 : oid == 23 ? 4 : 2
            guard bytes.count == size else { throw malformed("an integer of \(bytes.count) bytes") }
            var v: Int64 = bytes[0] & 0x80 != 0 ? -1 : 0
            for b in bytes { v = (v << 8) | Int64(b) }
            return .int64(v)
        case 16:   // bool
            guard bytes.count == 1 else { throw malformed("a boolean of \(bytes.count) bytes") }
            return .int64(Int64(bytes[0]))
        default:
            throw malformed("a column of type \(oid)")
        }
    }

    /// The error for an answer kc never asks for (`what` names it; never a value).
    static func malformed(_ what: String) -> KeychainError {
        KeychainError(errSecIO, "the PostgreSQL server answered \(what), which kc never asks for")
    }

    /// The value at `row`, `column`; nil for NULL or out of range.
    private func cell(_ row: Int, _ column: Int) -> PGValue? {
        guard row >= 0, row < cells.count, column >= 0, column < cells[row].count else { return nil }
        return cells[row][column]
    }

    /// The bytea (or text, as UTF-8) at `row`, `column`; nil for NULL or out of range.
    package func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        switch cell(row, column) {
        case .bytes(let b): b
        case .text(let s): Array(s.utf8)
        default: nil
        }
    }

    /// The integer at `row`, `column`; nil for NULL, out of range, or not an integer.
    package func int64(_ row: Int, _ column: Int) -> Int64? {
        if case .int64(let v) = cell(row, column) { return v }
        return nil
    }

    /// The text at `row`, `column`; nil for NULL, out of range, or not text.
    package func text(_ row: Int, _ column: Int) -> String? {
        if case .text(let s) = cell(row, column) { return s }
        return nil
    }

    /// Whether the value at `row`, `column` is SQL NULL (or out of range).
    package func isNull(_ row: Int, _ column: Int) -> Bool { cell(row, column) == nil }
}
