import CPostgres
import KeychainCore

/// The rows of one PostgreSQL answer read in place from libpq's result, for the statements
/// that read many rows (a first open's scan of every row): unlike `PGResult`, no value is
/// copied into a `PGValue` first, only those the caller asks for, straight into the type it
/// keeps. Every column is checked once to be in binary format and of the type it is read
/// as, every value's length against its type, so a malformed answer is nil (the caller's
/// error), never a crash. Owns the result (cleared on deinit); not thread-safe.
package final class PGRows {
    /// libpq's result, owned.
    private let result: OpaquePointer
    /// The number of rows.
    package let rowCount: Int
    /// The type OID of each column.
    private let types: [Oid]

    /// Takes ownership of libpq's `result` (a success of PQexec*).
    /// - Throws: errSecIO when a column is not in binary format (an empty answer excepted).
    init(taking result: OpaquePointer) throws {
        self.result = result
        rowCount = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        types = (0..<columns).map { PQftype(result, Int32($0)) }
        if rowCount > 0 {
            for c in 0..<columns where PQfformat(result, Int32(c)) != 1 {
                throw PGResult.malformed("a value in text format")
            }
        }
    }

    deinit { PQclear(result) }

    /// The value's bytes at `row`, `column` when it is not NULL, is in range and of one of
    /// `oids`; calls `body` on them in place (valid during the call only).
    private func withValue<T>(_ row: Int, _ column: Int, _ oids: Oid..., body: (UnsafeRawBufferPointer) -> T?) -> T? {
        guard row >= 0, row < rowCount, column >= 0, column < types.count, oids.contains(types[column]),
            PQgetisnull(result, Int32(row), Int32(column)) == 0
        else { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard length >= 0 else { return nil }
        guard length > 0, let p = PQgetvalue(result, Int32(row), Int32(column)) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: UnsafeRawPointer(p), count: length))
    }

    /// Whether the value at `row`, `column` is SQL NULL (or out of range).
    package func isNull(_ row: Int, _ column: Int) -> Bool {
        guard row >= 0, row < rowCount, column >= 0, column < types.count else { return true }
        return PQgetisnull(result, Int32(row), Int32(column)) != 0
    }

    /// The bytea at `row`, `column`, copied; nil for NULL, out of range or another type.
    package func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        withValue(row, column, 17) { Array($0) }
    }

    /// The text at `row`, `column`; nil for NULL, out of range or another type.
    package func text(_ row: Int, _ column: Int) -> String? {
        withValue(row, column, 25, 1043, 19) { String(decoding: $0, as: UTF8.self) }
    }

    /// The integer (int8, int4 or int2) at `row`, `column`; nil for NULL, out of range,
    /// another type or a value of the wrong size.
    package func int64(_ row: Int, _ column: Int) -> Int64? {
        guard column >= 0, column < types.count else { return nil }
        let size =
            switch types[column] {
            case 20: 8;
            case 23: 4;
            case 21: 2;
            default: 0
            }
        return withValue(row, column, 20, 23, 21) { v -> Int64? in
            guard size > 0, v.count == size else { return nil }
            var x: Int64 = v[0] & 0x80 != 0 ? -1 : 0
            for b in v { x = (x << 8) | Int64(b) }
            return x
        }
    }

    /// The boolean at `row`, `column`; nil for NULL, out of range or another type.
    package func bool(_ row: Int, _ column: Int) -> Bool? {
        withValue(row, column, 16) { v -> Bool? in v.count == 1 && v[0] <= 1 ? v[0] == 1 : nil }
    }
}
