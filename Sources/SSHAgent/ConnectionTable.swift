import POSIXSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The SSH agent's open connections, at most `capacity`. When a new client comes and the
/// table is full, the connection that has waited longest for its next message (idle, not
/// in the middle of a request or a confirmation) is shut down to make room, as OpenSSH's
/// agent does; only when every connection is busy is the new one refused. So idle clients,
/// however many, never lock others out.
final class ConnectionTable: Sendable {
    private struct Entry {
        let fd: Int32
        var busy: Bool
        var since: Deadline
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Admits the connection on `fd`, shutting down the longest idle one when full.
    /// - Returns: its id, nil when every connection is busy.
    func admit(_ fd: Int32) -> Int? {
        state.withLock { s in
            if s.entries.count >= capacity {
                guard let (id, victim) = s.entries.filter({ !$0.value.busy }).min(by: { $0.value.since < $1.value.since }) else {
                    return nil
                }
                // Its thread still owns the descriptor (it leaves the table before closing
                // it), so this shuts down that connection and no other: its read fails.
                shutdown(victim.fd, Int32(SHUT_RDWR))
                s.entries[id] = nil
            }
            let id = s.next
            s.next += 1
            s.entries[id] = Entry(fd: fd, busy: false, since: .now)
            return id
        }
    }

    /// Marks the connection as handling a message (`true`) or waiting for one (`false`).
    func setBusy(_ id: Int, _ busy: Bool) {
        state.withLock { s in
            s.entries[id]?.busy = busy
            s.entries[id]?.since = .now
        }
    }

    /// Forgets the connection (before its descriptor is closed).
    func remove(_ id: Int) { state.withLock { $0.entries[id] = nil } }

    /// How many connections are open.
    var count: Int { state.withLock { $0.entries.count } }
}
