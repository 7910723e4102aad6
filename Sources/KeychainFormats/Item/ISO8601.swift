import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Dates as kc writes them.
public enum ISO8601 {
    /// `2026-11-22T06:34:35Z` (UTC, whole seconds).
    public static func string(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
