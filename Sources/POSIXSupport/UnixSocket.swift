import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// A connected Unix stream socket with deadlines on every read and write, and the peer's
/// credentials (SO_PEERCRED).
package final class UnixSocket {
    package let fd: Int32

    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// `struct ucred` (not exported to Swift): pid, uid, gid.
    package struct PeerCredentials {
        package var pid: Int32 = 0; package var uid: UInt32 = 0; package var gid: UInt32 = 0
        package init() {}
    }

    /// The pid, uid and gid of the process at the other end (as of its connect or listen).
    package func peerCredentials() throws -> PeerCredentials {
        var cred = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else {
            throw KeychainError(errSecIO, "cannot read the peer's credentials: \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        return cred
    }

    /// The uid of the process at the other end (as of its connect or listen).
    package func peerUID() throws -> uid_t {
        try peerCredentials().uid
    }

    /// Connects to a socket path. Returns nil when nothing listens there.
    package static func connect(to path: String) throws -> UnixSocket? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "cannot create a socket") }
        let s = UnixSocket(fd: fd)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var address = try address(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc != 0 {
            if errno == ENOENT || errno == ECONNREFUSED { return nil }
            if errno == EAGAIN || errno == EINPROGRESS {
                // A full backlog: wait a bounded time for room, then retry once.
                usleep(100_000)
                let again = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                if again == 0 || errno == EISCONN { return s }
                throw KeychainError(
                    errSecNotAvailable, "the kc agent at \(path) is not accepting connections",
                    hint: "restart it: kc agent --stop && kc unlock")
            }
            throw KeychainError(errSecIO, "cannot connect to the kc agent at \(path): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        return s
    }

    /// Binds and listens on a path (the caller removed any stale socket).
    package static func listen(at path: String) throws -> UnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "cannot create a socket") }
        let s = UnixSocket(fd: fd)
        var address = try address(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw KeychainError(errSecIO, "cannot bind \(path): \(String(cString: strerror(errno)))", cause: .errno(errno)) }
        chmod(path, 0o600)
        guard Glibc.listen(fd, 64) == 0 else { throw KeychainError(errSecIO, "cannot listen on \(path)") }
        return s
    }

    /// Accepts one connection, or nil if none is pending.
    package func accept() -> UnixSocket? {
        let c = CloseOnExec.accept(fd)
        guard c >= 0 else { return nil }
        // Non-blocking: a client that stops reading cannot hold the agent past a deadline.
        _ = fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK)
        return UnixSocket(fd: c)
    }

    private static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KeychainError(errSecParam, "the socket path \(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Waits until the socket is readable (or writable) or the deadline passes.
    private func wait(events: Int16, until deadline: Deadline) throws {
        while true {
            let remaining = deadline.remainingMilliseconds
            guard remaining > 0 else { throw KeychainError(errSecIO, "the kc agent connection timed out") }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, Int32(min(remaining, Int(Int32.max))))
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw KeychainError(errSecIO, "poll failed") }
        }
    }

    /// Reads exactly `count` bytes into `buffer` at `offset`.
    package func readExactly(_ count: Int, into buffer: UnsafeMutableRawBufferPointer, until deadline: Deadline) throws {
        var done = 0
        while done < count {
            try wait(events: Int16(POLLIN), until: deadline)
            let n = read(fd, buffer.baseAddress! + done, count - done)
            if n < 0 { if errno == EINTR || errno == EAGAIN { continue }; throw KeychainError(errSecIO, "the kc agent connection failed") }
            if n == 0 { throw KeychainError(errSecIO, "the kc agent connection closed early") }
            done += n
        }
    }

    /// Writes every byte.
    package func writeAll(_ bytes: [UInt8], until deadline: Deadline) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                try wait(events: Int16(POLLOUT), until: deadline)
                let n = send(fd, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
                if n < 0 { if errno == EINTR || errno == EAGAIN { continue }; throw KeychainError(errSecIO, "the kc agent connection failed") }
                done += n
            }
        }
    }
}
