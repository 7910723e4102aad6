/// How the store selects candidate rows (the planner's choice, `docs/format.md` §7).
package enum RowLookup: Sendable {
    /// One row by its persistent id.
    case itemID([UInt8])
    /// The row with this primary-key fingerprint (fingerprints are keyed per class).
    case primaryKey([UInt8])
    /// Rows whose index columns all equal the given fingerprints (keyed per class; a
    /// certificate's public-key hash and a key's label share one key, so callers check
    /// the class of what they open).
    case indexes([(IndexColumn, [UInt8])])
    /// Rows that have every one of these pair fingerprints (a generic password's Secret
    /// Service map holds every pair asked for) and whose index columns equal the given
    /// fingerprints: an index lookup driven by the pair index (`docs/format.md` §7).
    case pairs([[UInt8]], indexes: [(IndexColumn, [UInt8])])
    /// Every row of a class.
    case scan(classCode: String)
    /// Every row of every class, read from the table itself (never from an index), for the
    /// integrity scans (`docs/format.md` §6).
    case all
}
