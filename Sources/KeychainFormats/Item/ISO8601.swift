import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Dates as kc writes them.
public enum ISO8601 {
    /// The seconds since 1970 of 0001-01-01T00:00:00Z and of 9999-12-31T23:59:59Z.
    static let representable: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// `2026-11-22T06:34:35Z` (UTC, whole seconds). A date outside the years 1–9999, or not
    /// a number at all (NaN, infinite), is written as its seconds since 2001 instead: such a
    /// value reaches kc as raw bits (from the agent, from an item another program stored),
    /// and converting it to `time_t` would trap.
    public static func string(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard representable.contains(seconds) else {   // false for NaN too
            return "not a date (\(date.timeIntervalSinceReferenceDate) s since 2001)"
        }
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// `string(_:)` of a time in whole seconds since 1970 (a team keychain's log times and
    /// expiries): `ISO8601.string(secondsSince1970: 1_795_329_275)` is `2026-11-22T06:34:35Z`.
    public static func string(secondsSince1970 seconds: UInt64) -> String {
        string(Date(timeIntervalSince1970: Double(seconds)))
    }
}
