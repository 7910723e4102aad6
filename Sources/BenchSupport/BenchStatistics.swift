/// Order statistics of the benchmarks' samples.
package enum BenchStatistics {
    /// The `q` quantile (0…1) of `sorted`, nearest rank; 0 when there is none.
    package static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(sorted.count) * q).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
    }

    /// The median of `values` (the upper one of an even count); 0 when there is none.
    package static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
