#if canImport(Glibc)
import Glibc
#endif

/// The benchmarks' clock: seconds on CLOCK_MONOTONIC.
package enum BenchClock {
    /// Seconds since an arbitrary start, never going back.
    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
