import CPostgres
import Synchronization

/// libpq's cancel request for a statement that passed its deadline (`PQcancel`, which
/// connects to the server on a socket of its own and waits for it to close): run on a
/// thread of its own, so that a server that does not answer that either cannot hold the
/// caller, which waits for `isDone` a bounded time (`PostgresConnection.cancelWait`) and
/// goes on. libpq's cancel object is freed with the last reference, the thread's or the
/// caller's.
final class CancelRequest: Sendable {
    /// libpq's cancel object (`PGcancel`), owned; used by `run` only.
    private nonisolated(unsafe) let cancel: OpaquePointer
    /// Whether `run` finished.
    private let done = Mutex(false)

    /// Takes ownership of `cancel` (from `PQgetCancel`).
    init(_ cancel: OpaquePointer) {
        self.cancel = cancel
    }

    deinit { PQfreeCancel(cancel) }

    /// Sends the cancel request and waits for the server to close its socket (blocking:
    /// call it on its own thread); answers whether it was sent.
    func run() -> Bool {
        var buffer = [CChar](repeating: 0, count: 256)
        let sent = PQcancel(cancel, &buffer, Int32(buffer.count)) == 1
        done.withLock { $0 = true }
        return sent
    }

    /// Whether `run` finished.
    var isDone: Bool { done.withLock { $0 } }
}
