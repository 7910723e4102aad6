/// Typed reads of one PostgreSQL answer's values, whether copied (`PGResult`) or read in
/// place from libpq (`PGRows`): nil for NULL, for a cell out of range and for a value of
/// another type, so that a malformed answer is the caller's error, never a crash.
package protocol PGCells {
    /// The bytes of a bytea or text value.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]?
    /// An integer value (int2, int4, int8).
    func int64(_ row: Int, _ column: Int) -> Int64?
    /// A text value.
    func text(_ row: Int, _ column: Int) -> String?
}

extension PGResult: PGCells {}
extension PGRows: PGCells {}
