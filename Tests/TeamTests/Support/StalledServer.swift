import Foundation
import Synchronization
import KeychainCore
import KCTestSupport
import POSIXSupport
@testable import TeamStore

/// The stalling server (issue 29, item 3): the ways a PostgreSQL server, or the network
/// to it, can stop answering while kc waits, each a real process or a real socket:
///
/// - `TableLock`: the real test cluster with `LOCK TABLE … IN ACCESS EXCLUSIVE MODE` held
///   by another session (a libpq connection of this process) on every team table, so that
///   each statement kc sends waits for the lock;
/// - `Silent`: a TCP listener on loopback that accepts connections and never says a
///   byte (kc's startup packet is never answered);
/// - `Relay`: a TCP relay to the real cluster that passes the startup and everything after
///   it until `goSilent()`, then keeps the connections open and passes nothing (a server
///   or network that stops mid-session). It can listen on any address of this machine
///   (the verified-TLS rail's tests put it on a non-loopback one).
///
/// `stop()` (in the test's `defer`) ends every thread and closes every socket: none
/// outlives a test.
enum StalledServer {
    /// A session of the real cluster holding ACCESS EXCLUSIVE locks on the team tables of
    /// the database `dsn` names, until `release()` (or deinit).
    final class TableLock {
        private let holder: PostgresConnection

        /// Takes the locks (waits for them at most the holder's round-trip deadline).
        init(dsn: String, tables: [String] = ["kc_keychains", "kc_log", "kc_items", "kc_members", "kc_mk_wraps"]) throws {
            holder = try PostgresConnection(dsn: dsn)
            try holder.begin(readOnlySnapshot: false)
            for table in tables { try holder.execute("LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE") }
        }

        /// Lets the waiting statements run.
        func release() { holder.rollback() }

        deinit { holder.rollback() }
    }

    /// A loopback TCP listener that accepts every connection and never answers.
    final class Silent: @unchecked Sendable {
        let port: Int
        private let listener: Int32
        private let accepted = Mutex<[Int32]>([])
        private let stopped = Mutex(false)

        init() throws {
            (listener, port) = try StalledServer.listen(on: "127.0.0.1")
            let t = Thread { [self] in
                while !stopped.withLock({ $0 }) {
                    var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                    guard poll(&p, 1, 100) > 0 else { continue }
                    let c = CloseOnExec.accept(listener)
                    if c >= 0 { accepted.withLock { $0.append(c) } }
                }
            }
            t.start()
        }

        /// A DSN for it (no TLS: loopback).
        var dsn: String { "postgresql://kc@127.0.0.1:\(port)/kc" }

        /// How many connections it accepted.
        var connections: Int { accepted.withLock { $0.count } }

        /// Closes the listener and every accepted connection (the test's `defer`).
        func stop() {
            guard
                !stopped.withLock({
                    let was = $0; $0 = true; return was
                })
            else { return }
            usleep(200_000)
            close(listener)
            accepted.withLock { $0.forEach { close($0) } }
        }
    }

    /// A TCP relay from `address` (any address of this machine) to the test cluster on
    /// 127.0.0.1, which goes silent on `goSilent()`.
    final class Relay: @unchecked Sendable {
        let address: String
        let port: Int
        private let target: Int
        private let listener: Int32
        private let silent = Mutex(false)
        private let stopped = Mutex(false)
        private let sockets = Mutex<[Int32]>([])
        private let running = Mutex(0)

        init(on address: String = "127.0.0.1", to targetPort: Int) throws {
            self.address = address
            target = targetPort
            (listener, port) = try StalledServer.listen(on: address)
            let accepting = Thread { [self] in acceptLoop() }
            accepting.start()
        }

        /// The host part of a DSN for it (IPv6 in brackets for a URI).
        var host: String { address.contains(":") ? "[\(address)]" : address }

        /// From now on, nothing passes either way (the connections stay open).
        func goSilent() { silent.withLock { $0 = true } }

        /// How many connections it relayed.
        var connections: Int { sockets.withLock { $0.count / 2 } }

        private func acceptLoop() {
            running.withLock { $0 += 1 }
            defer { running.withLock { $0 -= 1 } }
            while !stopped.withLock({ $0 }) {
                var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 100) > 0 else { continue }
                let client = CloseOnExec.accept(listener)
                guard client >= 0 else { continue }
                guard let server = try? StalledServer.connect(port: target) else { close(client); continue }
                sockets.withLock { $0 += [client, server] }
                let pump = Thread { [self] in self.pump(client, server) }
                pump.start()
            }
        }

        /// Copies bytes both ways until either side closes, the relay stops, or forever
        /// holds them once silent.
        private func pump(_ a: Int32, _ b: Int32) {
            running.withLock { $0 += 1 }
            defer { running.withLock { $0 -= 1 } }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !stopped.withLock({ $0 }) {
                if silent.withLock({ $0 }) { usleep(50_000); continue }
                var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
                guard poll(&fds, 2, 100) > 0 else { continue }
                if silent.withLock({ $0 }) { continue }
                for (i, from) in [a, b].enumerated() where fds[i].revents != 0 {
                    let to = from == a ? b : a
                    let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                    guard n > 0 else { shutdown(to, Int32(SHUT_WR)); return }
                    var done = 0
                    while done < n {
                        let w = buffer.withUnsafeBytes { send(to, $0.baseAddress! + done, n - done, Int32(MSG_NOSIGNAL)) }
                        guard w > 0 else { return }
                        done += w
                    }
                }
            }
        }

        /// Ends its threads and closes every socket (the test's `defer`).
        func stop() {
            guard
                !stopped.withLock({
                    let was = $0; $0 = true; return was
                })
            else { return }
            for _ in 0..<50 where running.withLock({ $0 }) > 0 { usleep(20_000) }
            close(listener)
            sockets.withLock { $0.forEach { close($0) } }
        }
    }

    /// A listening TCP socket on `address` (IPv4 or IPv6) and a free port.
    static func listen(on address: String) throws -> (Int32, Int) {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "socket failed: errno \(errno)") }
        var ok = false
        var port = 0
        if v6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, address, &a.sin6_addr)
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            ok = withUnsafeMutablePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            port = Int(UInt16(bigEndian: a.sin6_port))
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = inet_addr(address)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            ok = withUnsafeMutablePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            port = Int(UInt16(bigEndian: a.sin_port))
        }
        guard ok, Glibc.listen(fd, 16) == 0 else {
            close(fd)
            throw KeychainError(errSecIO, "cannot listen on \(address): errno \(errno)")
        }
        return (fd, port)
    }

    /// A TCP connection to 127.0.0.1:`port`.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "socket failed") }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        a.sin_port = UInt16(port).bigEndian
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw KeychainError(errSecIO, "connect failed: errno \(errno)") }
        return fd
    }

    /// This machine's first non-loopback address (IPv4 first, then a global IPv6), from
    /// its interfaces: the address a "remote" connection that never leaves the machine
    /// can go to. Nil when it has none.
    static func nonLoopbackAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var v4: String?, v6: String?
        var p: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = p {
            defer { p = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0,
                entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
            else { continue }
            var buffer = [CChar](repeating: 0, count: 64)
            if Int32(sa.pointee.sa_family) == AF_INET, v4 == nil {
                var a = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                inet_ntop(AF_INET, &a, &buffer, 64)
                v4 = String(cString: buffer)
            } else if Int32(sa.pointee.sa_family) == AF_INET6, v6 == nil {
                var a = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                let bytes = withUnsafeBytes(of: a) { Array($0) }
                guard !(bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80) else { continue }   // not link-local
                inet_ntop(AF_INET6, &a, &buffer, 64)
                v6 = String(cString: buffer)
            }
        }
        return v4 ?? v6
    }
}
