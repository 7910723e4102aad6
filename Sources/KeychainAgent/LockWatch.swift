import KeychainCore
import POSIXSupport
import AgentWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// While the team agent's serving thread performs one request (which may wait for a
/// stalled PostgreSQL server up to its round-trip deadline), a second thread watches the
/// agent's socket: a lock (`kc lock -k team:NAME`, `kc lock --all`) or a stop (`kc-team
/// agent --stop`, `kc agent --stop`) is answered at once, after `KeyRevocation.revoke()`
/// made the keys of the keychains it names unusable (zeroed, their connections shut);
/// the serving thread applies the lock or stop itself as soon as its request ends. Every
/// other request is read and left, with its connection, for the serving thread, which
/// serves them in order after the one it is in (`docs/team.md`, "A stalled server").
final class LockWatch: @unchecked Sendable {
    /// What the watch did and left for the serving thread.
    struct Outcome: ~Copyable {
        /// Every keychain is to lock (`kc lock --all`), or the agent to stop.
        var all = false
        var stop = false
        /// The keychains a lock named.
        var paths: Set<String> = []
        /// Requests read but not served, with their connections, in order.
        var pending: [Left] = []
    }

    /// A request read and left for the serving thread, which alone uses it from then on.
    struct Left: @unchecked Sendable {
        let connection: UnixSocket
        let payload: [UInt8]
    }

    private let listener: UnixSocket
    private let held: [(path: String, revocation: KeyRevocation)]
    private let state = Mutex(Outcome())
    /// A pipe whose write end `finish` closes to end the thread.
    private let wake: (read: Int32, write: Int32)
    private var thread = pthread_t()
    private var started = false

    /// Starts watching `listener`; `held` are the revocations of the keychains held now
    /// and of one being unlocked (a path may appear twice: held, and being unlocked again).
    init(listener: UnixSocket, held: [(path: String, revocation: KeyRevocation)]) {
        self.listener = listener
        self.held = held
        let fds = CloseOnExec.pipe() ?? [-1, -1]
        wake = (fds[0], fds[1])
        guard wake.read >= 0 else { return }
        let raw = Unmanaged.passRetained(self).toOpaque()
        started =
            pthread_create(
                &thread, nil,
                { p in
                    guard let p else { return nil }
                    Unmanaged<LockWatch>.fromOpaque(p).takeRetainedValue().run()
                    return nil
                }, raw) == 0
        if !started { Unmanaged<LockWatch>.fromOpaque(raw).release() }
    }

    /// Ends the watch (waits for a request it is reading, at most its 2 s deadline) and
    /// answers what it did and left.
    func finish() -> Outcome {
        if wake.write >= 0 { close(wake.write) }
        if started { pthread_join(thread, nil) }
        if wake.read >= 0 { close(wake.read) }
        return state.withLock { s in
            var taken = Outcome()
            swap(&taken, &s)
            return taken
        }
    }

    /// The thread: each connection's request is read; a lock or stop is acted on and
    /// answered, anything else kept for the serving thread.
    private func run() {
        while true {
            var fds = [pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let rc = poll(&fds, 2, 1_000)
            if rc < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { return }
            guard rc > 0, fds[0].revents != 0, let connection = listener.accept() else { continue }
            guard let uid = try? connection.peerUID(), uid == geteuid() else { continue }
            guard var payload = try? connection.readFrame(until: .after(seconds: AgentServer.requestDeadline)) else { continue }
            if act(on: payload, connection) {
                Sodium.wipe(&payload)
            } else {
                // Wiped by the serving thread once it answered it.
                let left = Left(connection: connection, payload: payload)
                state.withLock { $0.pending.append(left) }
            }
        }
    }

    /// Acts on a lock or stop and answers it; false for any other request (left as it is).
    private func act(on payload: [UInt8], _ connection: UnixSocket) -> Bool {
        guard let (version, type, body) = try? AgentProtocol.parse(payload), version == AgentProtocol.version,
            type == AgentProtocol.Request.lock.rawValue || type == AgentProtocol.Request.stop.rawValue,
            let request = try? AgentRequest.decode(type: type, body: body)
        else { return false }
        switch consume request {
        case .lock(let all, let path):
            for (p, revocation) in held where all || p == path { revocation.revoke() }
            state.withLock { s in
                if all { s.all = true } else { s.paths.insert(path) }
            }
        case .stop:
            for (_, revocation) in held { revocation.revoke() }
            state.withLock { $0.stop = true }
        default:
            return false
        }
        try? connection.writeAll(AgentReply.ok(nil).frame(), until: .after(seconds: 5))
        return true
    }
}
