import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// A point in time on CLOCK_BOOTTIME, which keeps counting while the machine is
/// suspended: a laptop closed overnight must wake up locked.
package struct Deadline: Comparable, Sendable {
    package let nanoseconds: UInt64

    package static var now: Deadline {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Deadline(nanoseconds: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }

    /// Longest span a deadline is set to: ten years (larger and non-finite values saturate).
    static let maxSeconds = 10.0 * 365 * 24 * 3600

    package static func after(seconds: Double) -> Deadline {
        let s = seconds.isFinite ? min(max(0, seconds), maxSeconds) : (seconds > 0 ? maxSeconds : 0)
        let (sum, overflow) = now.nanoseconds.addingReportingOverflow(UInt64(s * 1e9))
        return Deadline(nanoseconds: overflow ? UInt64.max : sum)
    }

    var remainingMilliseconds: Int {
        let n = Deadline.now.nanoseconds
        return nanoseconds > n ? Int((nanoseconds - n) / 1_000_000) + 1 : 0
    }

    package var remainingSeconds: UInt64 {
        let n = Deadline.now.nanoseconds
        return nanoseconds > n ? (nanoseconds - n + 999_999_999) / 1_000_000_000 : 0
    }

    package static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }
}
