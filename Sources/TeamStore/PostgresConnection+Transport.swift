import CPostgres
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The verified-TLS rail (`docs/team.md`, "TLS"): a team keychain's traffic goes to a
/// server on another machine only over TLS that verified the server (`sslmode=verify-full`
/// or `verify-ca`), unless the team was created or joined with `--insecure-transport`.
///
/// "Another machine" is decided by the address the connection reached, never by a name:
/// a connection is local when it runs over a Unix-domain socket or TCP to a loopback
/// address (127.0.0.0/8, ::1, or an IPv4-mapped 127.x); anything else is remote, this
/// machine's own non-loopback addresses included (their traffic is routable). The rail is
/// checked three times: on the DSN as given (`checkTransport`, before any connection), on
/// the options libpq resolved for the connection it is about to make (the DSN, the PG*
/// variables and the pg_service file together, before a byte of the startup goes out), and
/// on the established connection itself (its peer address, `PQsslInUse` and the sslmode in
/// force), before kc sends any statement.
extension PostgresConnection {
    /// Refuses a DSN that would send a team keychain's traffic over an unverified channel:
    /// a host other than the loopback address or a Unix socket needs `sslmode=verify-full`
    /// (or verify-ca) unless `insecureAllowed` (`--insecure-transport`).
    /// What the DSN leaves out is libpq's default (`PGHOST`, `PGSSLMODE`, …), checked too.
    /// - Throws: errSecParam naming both ways out.
    package static func checkTransport(dsn: String, insecureAllowed: Bool) throws {
        let options = defaults().merging(try parse(dsn)) { _, given in given }
        if insecureAllowed { return }
        try checkOptions(options)
    }

    /// `checkTransport` on options already resolved (libpq's own view of a connection).
    static func checkOptions(_ options: [String: String]) throws {
        let mode = options["sslmode"].flatMap { $0.isEmpty ? nil : $0 } ?? "prefer"
        if isVerified(mode) { return }
        let hosts =
            (options["host"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            + (options["hostaddr"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let first = hosts.first(where: { !isLocal($0) }) else { return }
        throw refusal(first, mode: mode)
    }

    /// Whether an sslmode verifies the server's certificate.
    static func isVerified(_ mode: String) -> Bool { mode == "verify-full" || mode == "verify-ca" }

    /// The error of the rail, naming the server and the mode.
    static func refusal(_ server: String, mode: String) -> KeychainError {
        KeychainError(
            errSecParam,
            "refusing to reach the PostgreSQL server \(server) without verified TLS (sslmode is \(mode))",
            hint: "add sslmode=verify-full to the DSN (or the service file), or give --insecure-transport on a network you trust")
    }

    /// The loopback address, localhost, a Unix socket folder, or nothing (libpq's default socket).
    static func isLocal(_ host: String) -> Bool {
        let h = host.trimmingSpaces
        if h.isEmpty || h.hasPrefix("/") || h.hasPrefix("@") || h == "localhost" || h == "::1" || h == "[::1]" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, h, &v4) == 1 { return isLoopback(v4) }
        return false
    }

    /// Whether an IPv4 address is in 127.0.0.0/8.
    static func isLoopback(_ a: in_addr) -> Bool { UInt32(bigEndian: a.s_addr) >> 24 == 127 }

    /// The rail on the options libpq resolved for `conn` (`PQconninfo`: the DSN, the PG*
    /// variables and the service file together), before it sends anything.
    /// - Throws: errSecParam when they name a remote host without verified TLS.
    static func checkResolved(_ conn: OpaquePointer) throws {
        guard let info = PQconninfo(conn) else {
            throw KeychainError(errSecAllocate, "cannot read the PostgreSQL connection's options: out of memory")
        }
        defer { PQconninfoFree(info) }
        try checkOptions(read(info, skipEmpty: true))
    }

    /// The rail on the established connection `conn`: local (its peer is a Unix socket or a
    /// loopback address), or TLS in use with a verifying sslmode.
    /// - Throws: errSecParam when the connection is remote and not verified.
    static func checkEstablished(_ conn: OpaquePointer) throws {
        let peer = peerDescription(PQsocket(conn))
        if peer.local { return }
        var mode = "prefer"
        if let info = PQconninfo(conn) {
            mode = read(info, skipEmpty: true)["sslmode"] ?? mode
            PQconninfoFree(info)
        }
        if PQsslInUse(conn) == 1 && isVerified(mode) { return }
        throw refusal(peer.address, mode: PQsslInUse(conn) == 1 ? mode : mode + ", no TLS in use")
    }

    /// The rail on this connection as it is now (`checkEstablished`), whatever
    /// `insecureTransport` says (for tests and diagnostics).
    /// - Throws: errSecParam when it is remote and not verified; errSecNotAvailable when lost.
    package func checkEstablishedTransport() throws {
        try Self.checkEstablished(try live())
    }

    /// Whether the socket `fd` is connected to this machine over a local channel (a Unix
    /// socket, or TCP to a loopback address), and its peer's address for messages.
    static func peerDescription(_ fd: Int32) -> (local: Bool, address: String) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return (false, "(unknown peer)") }
        switch Int32(storage.ss_family) {
        case AF_UNIX:
            return (true, "(Unix socket)")
        case AF_INET:
            let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr } }
            return (isLoopback(a), text(AF_INET, a))
        case AF_INET6:
            let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr } }
            let b = withUnsafeBytes(of: a) { Array($0) }
            let loopback = b == [UInt8](repeating: 0, count: 15) + [1]
            let mapped127 = b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xff && b[11] == 0xff && b[12] == 127
            return (loopback || mapped127, text(AF_INET6, a))
        default:
            return (false, "(unknown peer)")
        }
    }

    /// An address as text (`inet_ntop`).
    private static func text<A>(_ family: Int32, _ address: A) -> String {
        var a = address
        var buffer = [CChar](repeating: 0, count: 64)
        guard inet_ntop(family, &a, &buffer, socklen_t(buffer.count)) != nil else { return "(unknown peer)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
