#if canImport(Glibc)
import Glibc
#endif

/// A computation on a POSIX thread of its own, joined for its result: a first open reads
/// the log on its connection while another thread scans the rows on a second one
/// (`TeamAuthority.fullVerification`), a re-key writes a batch while the next is re-sealed
/// (`RowResealer.start`), and `kc-team-bench` runs its readers and writers on these. The team agent otherwise serves on one thread; this
/// one shares nothing with it but what `body` captures (Sendable) and what `join` hands
/// back.
///
///     let scan = try BackgroundThread { try countRows() }
///     …
///     let rows = try scan.join()
package final class BackgroundThread<T: Sendable>: @unchecked Sendable {
    /// Where the thread leaves its result, written before it ends and read after
    /// `pthread_join` (which orders the two).
    private final class Outcome: @unchecked Sendable {
        var result: Result<T, any Error>?
    }

    /// The thread's handle.
    private let thread: pthread_t
    /// The thread's result.
    private let outcome: Outcome
    /// Whether `join` ran (a thread is joined once).
    private var joined = false

    /// Starts `body` on a new thread.
    /// - Throws: `CannotStart` when the system refuses another thread (the caller then does
    ///   the work itself).
    package init(_ body: @escaping @Sendable () throws -> T) throws {
        let outcome = Outcome()
        self.outcome = outcome
        thread = try startThread {
            do {
                outcome.result = .success(try body())
            } catch {
                outcome.result = .failure(error)
            }
        }
    }

    /// Waits for the thread and answers what `body` returned, or throws what it threw.
    package func join() throws -> T {
        if !joined {
            pthread_join(thread, nil)
            joined = true
        }
        guard let result = outcome.result else { throw CannotStart(code: 0) }
        return try result.get()
    }

    /// Lets the thread end on its own, unjoined: its result is not wanted (`body` shares
    /// nothing with the caller but what it captured, and ends by itself).
    package func detach() {
        guard !joined else { return }
        pthread_detach(thread)
        joined = true
    }

    deinit {
        // A thread never joined (its caller threw first) is joined here: no thread of a
        // first open outlives it.
        if !joined { pthread_join(thread, nil) }
    }
}

/// The system refused a thread (`pthread_create`'s error `code`).
struct CannotStart: Error {
    let code: Int32
}

/// What a thread runs: a C thread entry cannot capture context, so it gets this object.
private final class ThreadStart {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Runs `body` on a new joinable thread. - Throws: `CannotStart`.
private func startThread(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
    let raw = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(
        &thread, nil,
        { p in
            guard let p else { return nil }
            Unmanaged<ThreadStart>.fromOpaque(p).takeRetainedValue().body()
            return nil
        }, raw)
    guard rc == 0 else {
        Unmanaged<ThreadStart>.fromOpaque(raw).release()
        throw CannotStart(code: rc)
    }
    return thread
}
