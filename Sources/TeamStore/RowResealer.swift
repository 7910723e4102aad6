import Dispatch
import KeychainCore
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// The per-row work of a re-key (`TeamAuthority.changeRoster`): open each row's metadata
/// under the current keys (which checks its fingerprints against its attributes), re-wrap
/// its data key and re-seal its metadata and fingerprints under the new keys, and hash the
/// new row. The rows are independent, so the work is spread over the machine's cores in
/// contiguous stripes; the answer is in the rows' order and the same whatever the number
/// of cores, and the error, when rows fail, is the first failing row's.
struct RowResealer {
    /// The codec of the keys the rows are sealed under now.
    let from: RowCodec
    /// The codec of the new keys.
    let to: RowCodec
    /// The row version every new row gets (the re-key's generation).
    let rowVersion: UInt64

    /// One re-sealed row and its hash (`RowHash`), which the new ledger and set hash hold.
    struct Resealed: Sendable {
        /// The new row; its data is the old row's, untouched.
        var row: ItemRow
        /// `RowHash.of(row)`.
        var hash: [UInt8]
    }

    /// How many threads share the work: the processors online (one fewer when `leavingOne`,
    /// for the server, which writes the batch before meanwhile), at least 1, at most 16,
    /// and no more than one per 64 rows (a small batch is not worth a thread).
    static func stripes(for count: Int, leavingOne: Bool = false) -> Int {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) - (leavingOne ? 1 : 0)
        return max(1, min(online, 16, count / 64))
    }

    /// Re-seals one row.
    func reseal(_ row: ItemRow) throws -> Resealed {
        let item = try from.open(row)
        let new = try from.rekey(row, attributes: item.attributes, to: to, rowVersion: rowVersion)
        return Resealed(row: new, hash: RowHash.of(new))
    }

    /// Re-seals `rows` on `stripes` threads (the calling one among them).
    /// - Returns: one result per row, in the order of `rows`.
    /// - Throws: the error of the first row (in `rows`' order) that failed.
    func reseal(_ rows: ArraySlice<ItemRow>, stripes: Int? = nil) throws -> [Resealed] {
        let n = rows.count
        let k = max(1, min(stripes ?? Self.stripes(for: n), max(n, 1)))
        var results = [Resealed?](repeating: nil, count: n)
        var failures = [(any Error)?](repeating: nil, count: k)
        let base = rows.startIndex
        results.withUnsafeMutableBufferPointer { results in
            failures.withUnsafeMutableBufferPointer { failures in
                // Each stripe writes only its own slots of `out` and `failed`; `rows` and the
                // codecs' keys are only read.
                nonisolated(unsafe) let out = results, failed = failures
                let work: @Sendable (Int) -> Void = { s in
                    var i = n * s / k
                    let end = n * (s + 1) / k
                    do {
                        while i < end {
                            out[i] = try reseal(rows[base + i])
                            i += 1
                        }
                    } catch {
                        failed[s] = error
                    }
                }
                if k == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: k, execute: work) }
            }
        }
        // Stripes are contiguous and in order, so the first stripe that failed holds the
        // first failing row.
        if let first = failures.lazy.compactMap({ $0 }).first { throw first }
        let done = results.compactMap { $0 }
        guard done.count == n else { throw KeychainError(errSecInternalError, "a re-key left \(n - done.count) rows without a result") }
        return done
    }

    /// Re-seals `rows` on another thread while the caller goes on (writing the batch before,
    /// which waits on the server: one processor is left to it when the machine has more
    /// than one); its `join()` answers what `reseal(_:)` would. Nil when no thread starts
    /// (the caller then re-seals the rows itself).
    func start(_ rows: ArraySlice<ItemRow>) -> BackgroundThread<[Resealed]>? {
        let stripes = Self.stripes(for: rows.count, leavingOne: true)
        return try? BackgroundThread { [self] in try reseal(rows, stripes: stripes) }
    }
}
