import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The dates import sources write: ISO 8601 (`2024-01-15T10:20:30Z`, with fractions or an
/// offset) and milliseconds since 1970 (Firefox).
package enum ImportDates {
    /// `YYYY-MM-DD[T ]HH:MM:SS[.fff][Z|±HH:MM]`; no zone means UTC. Nil for anything else.
    package static func iso8601(_ text: String) -> Date? {
        let s = Array(text.trimmingSpaces.utf8)
        guard s.count >= 19 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= s.count else { return nil }
            var v = 0
            for b in s[from..<from + count] {
                guard b >= 0x30 && b <= 0x39 else { return nil }
                v = v * 10 + Int(b - 0x30)
            }
            return v
        }
        guard let year = number(0, 4), s[4] == UInt8(ascii: "-"), let month = number(5, 2), s[7] == UInt8(ascii: "-"),
            let day = number(8, 2), s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: " "),
            let hour = number(11, 2), s[13] == UInt8(ascii: ":"), let minute = number(14, 2), s[16] == UInt8(ascii: ":"),
            let second = number(17, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < s.count && s[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            while i < s.count, s[i] >= 0x30 && s[i] <= 0x39 {
                fraction += Double(s[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
        }
        var offset = 0
        if i < s.count {
            if s[i] == UInt8(ascii: "Z") && i + 1 == s.count {
                i += 1
            } else if s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-"), let oh = number(i + 1, 2) {
                var om = 0
                if i + 3 < s.count {
                    let m = s[i + 3] == UInt8(ascii: ":") ? i + 4 : i + 3
                    guard let v = number(m, 2), m + 2 == s.count else { return nil }
                    om = v
                } else if i + 3 != s.count {
                    return nil
                }
                offset = (oh * 60 + om) * 60 * (s[i] == UInt8(ascii: "-") ? -1 : 1)
            } else {
                return nil
            }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    /// Milliseconds since 1970 as text (Firefox's timeCreated). Nil for anything else.
    package static func milliseconds(_ text: String) -> Date? {
        guard let ms = Int64(text.trimmingSpaces), ms > 0 else { return nil }
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }
}
