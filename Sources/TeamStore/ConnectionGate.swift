import KeychainCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What another thread uses to shut a `PostgresConnection` for good: when a keychain is
/// locked or its agent stopped while its serving thread waits for the server, the lock
/// `revoke`s the connection's gate: its socket is shut down (the wait ends at once) and
/// every later statement or reconnect on it is refused as locked. The owner attaches and
/// detaches its socket under the same lock, so `revoke` never shuts a descriptor number
/// that was closed and reused meanwhile.
package final class ConnectionGate: Sendable {
    /// Whether the gate was shut, and the socket it shuts (-1: none).
    private let state = Mutex<(revoked: Bool, socket: Int32)>((false, -1))

    /// A gate that is open, with no socket yet.
    package init() {}

    /// Shuts the gate: shuts the socket down for reading and writing (a poll on it
    /// returns at once) and refuses every later round trip. Callable from any thread.
    package func revoke() {
        state.withLock { s in
            s.revoked = true
            if s.socket >= 0 { _ = shutdown(s.socket, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether `revoke` was called.
    package var isRevoked: Bool { state.withLock { $0.revoked } }

    /// Records the socket of a new connection; false (nothing recorded) when the gate is shut.
    func attach(_ socket: Int32) -> Bool {
        state.withLock { s in
            guard !s.revoked else { return false }
            s.socket = socket
            return true
        }
    }

    /// Forgets the socket and runs `close` (which closes it) under the gate's lock.
    func detach(_ close: () -> Void) {
        state.withLock { s in
            s.socket = -1
            close()
        }
    }

    /// The error of a round trip on a shut gate: the keychain was locked.
    func lockedError(_ server: String) -> KeychainError {
        KeychainError(
            errSecInteractionNotAllowed, "the team keychain was locked while it waited for the PostgreSQL server \(server)",
            hint: "unlock it again")
    }
}
