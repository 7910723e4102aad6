#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The kind of value an attribute holds, as in Apple's schema (`SecItemSchema.c`).
enum AttributeKind: Sendable {
    /// String or data, kept as given; compared by bytes (acct, svce, labl, …).
    case blob
    /// Data; a string is converted to its UTF-8 bytes (issr, slnr, klbl, …).
    case data
    /// A string; data is decoded as UTF-8 (agrp, pdmn).
    case string
    /// An integer; a numeric string converts, any other string is kept (ptcl "htps").
    case number
    /// A number that is 0 or 1, returned as `Bool` (invi, sync, kSecAttrCan…).
    case bool
    /// A date (cdat, mdat, sdat, edat), stored as seconds since 2001-01-01 (CFAbsoluteTime).
    case date
    /// A Secret Service attribute map (`kcsa`, a kc extension): `[String: String]`,
    /// compared pair by pair, by bytes.
    case map
}
