import KeychainCore
import POSIXSupport
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Whose X server `$DISPLAY` names: a copy with xclip or xsel goes there only when it is
/// this user's or root's. `su` without `-` keeps `$DISPLAY`, and every client of an X
/// server can read its CLIPBOARD selection: a secret copied to another account's server is
/// that account's (docs/commands.md, "The clipboard"; docs/security.md).
///
/// The display is resolved as libxcb (under xclip's and xsel's Xlib) resolves it, and the
/// server found where the tool will connect:
/// - a Unix socket (`:N`, `unix:N`, `unix/:N`, `/path/to/socket[.S]`): xcb tries the
///   abstract socket `@/tmp/.X11-unix/XN` first, then the file; kc connects the same way
///   and reads the server's uid from the connection (SO_PEERCRED), so neither a socket file
///   chowned after the fact nor an abstract socket without a file can mislead it; and it
///   requires the server to answer on the abstract socket, whose name another account
///   could otherwise take after the check;
/// - TCP on this machine (`localhost:N`, `127.0.0.1:N`, `[::1]:N`, as an ssh-forwarded
///   display is): the uid of every socket listening on port 6000+N on a loopback or
///   wildcard address (/proc/net/tcp, tcp6), all of which must be this user's or root's
///   (sshd's listener for a forwarded display is the user's own);
/// - any other host: refused, since kc cannot tell whose server that is (and X11's own
///   protocol would carry the secret in clear).
enum XServerOwner {
    /// Why the display cannot take a secret, or nil when its server is this user's or root's.
    static func refusal(display: String) -> String? {
        let target: Target
        switch parse(display) {
        case .none: return "DISPLAY=\(display) is not a display name kc can check"
        case .some(let t): target = t
        }
        let me = getuid()
        switch target {
        case .socket(let path):
            let server = unixServer(path)
            guard let uid = server.uid else { return "no X server answers at \(display) (\(path))" }
            guard uid == me || uid == 0 else { return "the X server at \(display) is another account's (uid \(uid)), not this user's or root's" }
            guard server.abstract else {
                return "the X server at \(display) does not listen on its abstract socket (@\(path)), and another account could take that name "
                    + "between kc's check and the tool's connect (the tool tries it first): let the server listen there (no `-nolisten local`)"
            }
            return nil
        case .tcp(let host, let port):
            guard isLoopback(host) else {
                return "DISPLAY=\(display) is on another host: kc cannot tell whose X server that is"
            }
            let listeners = tcpListeners(port: port)
            guard !listeners.isEmpty else { return "no X server listens at \(display) (port \(port))" }
            if let other = listeners.first(where: { $0.uid != me && $0.uid != 0 }) {
                return "the X server at \(display) is another account's (uid \(other.uid)), not this user's or root's"
            }
            // xcb connects to the addresses `host` resolves to, in order, and keeps the first
            // that answers: each one before the first a listener holds is free for another
            // account to take between this check and the tool's connect.
            for address in resolve(host) {
                if listeners.contains(where: { holds($0.address, address) }) { return nil }
                return "nothing of this user's or root's listens at \(text(address)) port \(port), where the tool connects first for \(display), "
                    + "and another account could take it between kc's check and the tool's connect"
            }
            return "DISPLAY=\(display) names no address kc can check"
        }
    }

    /// Where a display's server is reached.
    enum Target: Equatable {
        /// A Unix socket path (the abstract socket of the same name is tried first).
        case socket(String)
        /// A TCP port on a host.
        case tcp(host: String, port: Int)
    }

    /// `display` as libxcb's `_xcb_parse_display` and `_xcb_open` read it, or nil when it
    /// names no display.
    ///
    ///     XServerOwner.parse(":0")              // .socket("/tmp/.X11-unix/X0")
    ///     XServerOwner.parse("localhost:10.0")  // .tcp(host: "localhost", port: 6010)
    static func parse(_ display: String) -> Target? {
        if display.hasPrefix("/") {
            // <path to socket>[.<screen>]
            if isSocket(display) { return .socket(display) }
            guard let dot = display.lastIndex(of: "."), isNumber(display[display.index(after: dot)...]) else { return nil }
            let path = String(display[..<dot])
            return isSocket(path) ? .socket(path) : nil
        }
        var rest = Substring(display)
        var proto: Substring?
        if let slash = rest.lastIndex(of: "/") {
            proto = rest[..<slash]
            rest = rest[rest.index(after: slash)...]
        }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        var host = rest[..<colon]
        let after = rest[rest.index(after: colon)...]
        let parts = after.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, isNumber(first), parts.count == 1 || isNumber(parts[1]),
            let number = Int(first), number < 60000
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if proto != "unix" && !host.isEmpty && host != "unix" {
            return .tcp(host: String(host), port: 6000 + number)
        }
        return .socket("/tmp/.X11-unix/X\(number)")
    }

    private static func isNumber(_ s: Substring) -> Bool { !s.isEmpty && s.allSatisfy { $0.isASCII && $0.isNumber } }

    private static func isSocket(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Whether `host` is this machine's loopback, as xcb would reach it.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }

    /// The uid of the server at a Unix socket, reached as xcb reaches it: the abstract
    /// socket first, then (only if nothing is bound there) the file; nil when nothing
    /// answers. `abstract` says whether it answered on the abstract socket: only then is
    /// the name held, since any account may bind a free abstract name, and xcb, trying it
    /// first, would reach that account's server in the moment between this check and the
    /// tool's connect [ClipboardTests.aSquatterOnTheAbstractNameGetsNoCopy].
    static func unixServer(_ path: String) -> (uid: uid_t?, abstract: Bool) {
        switch peerUID(path, abstract: true) {
        case .answered(let uid): return (uid, true)
        case .absent: break
        case .failed: return (nil, false)
        }
        if case .answered(let uid) = peerUID(path, abstract: false) { return (uid, false) }
        return (nil, false)
    }

    /// What a connection attempt found.
    private enum Probe { case answered(uid_t), absent, failed }

    /// Connects to `path` (abstract: in the abstract namespace, with no trailing NUL, as
    /// xcb names it) and reads the peer's uid. `.absent` when nothing is bound there (xcb
    /// then tries the file), `.failed` for any other error (xcb then gives up).
    private static func peerUID(_ path: String, abstract: Bool) -> Probe {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failed }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = (abstract ? [0] : []) + Array(path.utf8)
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else { return .failed }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard rc == 0 else { return errno == ENOENT || errno == ECONNREFUSED ? .absent : .failed }
        var cred = UnixSocket.PeerCredentials()
        var size = socklen_t(MemoryLayout<UnixSocket.PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) == 0, cred.pid != 0 else { return .failed }
        return .answered(cred.uid)
    }

    /// The uids of the sockets listening on TCP `port` at a loopback or wildcard address.
    static func tcpListenerUIDs(port: Int) -> [uid_t] { tcpListeners(port: port).map(\.uid) }

    /// The addresses xcb's `_xcb_open_tcp` tries for `host`, in its order (getaddrinfo,
    /// any family, stream sockets, AI_ADDRCONFIG), as 4 or 16 bytes.
    static func resolve(_ host: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var out: [[UInt8]] = []
        var next = list
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    let a = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    out.append(withUnsafeBytes(of: a) { Array($0) })
                } else if entry.pointee.ai_family == AF_INET6 {
                    let a = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    out.append(withUnsafeBytes(of: a) { Array($0) })
                }
            }
            next = entry.pointee.ai_next
        }
        return out
    }

    /// Whether a listener bound at `listener` takes the connections to `address`: the same
    /// address, the wildcard of its family, or for IPv4 the IPv6 wildcard (dual-stack) or
    /// the IPv4-mapped form of the address.
    static func holds(_ listener: [UInt8], _ address: [UInt8]) -> Bool {
        if listener == address { return true }
        if listener.count == address.count { return listener.allSatisfy { $0 == 0 } }
        guard address.count == 4, listener.count == 16 else { return false }
        return listener.allSatisfy { $0 == 0 } || listener == [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + address
    }

    /// An address as text (inet_ntop).
    static func text(_ address: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = address.count == 4 ? AF_INET : AF_INET6
        let ok = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        return ok ? String(cString: buffer) : "?"
    }

    /// The sockets listening on TCP `port` at a loopback or wildcard address, IPv4 and
    /// IPv6, with their address (4 or 16 bytes) and uid, from /proc/net/tcp and
    /// /proc/net/tcp6 (this network namespace, the one xclip connects from).
    static func tcpListeners(port: Int) -> [(address: [UInt8], uid: uid_t)] {
        var found: [(address: [UInt8], uid: uid_t)] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let data = FileManager.default.contents(atPath: table) else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
                let fields = line.split(separator: " ")
                guard fields.count > 7, fields[3] == "0A" else { continue }
                let local = fields[1].split(separator: ":")
                guard local.count == 2, Int(local[1], radix: 16) == port, isLoopbackOrAny(hex: local[0]),
                    let uid = uid_t(fields[7]), let address = bytes(hex: local[0])
                else { continue }
                found.append((address, uid))
            }
        }
        return found
    }

    /// A /proc/net/tcp address as bytes in network order: each 32-bit word is printed in
    /// this machine's (little-endian) order.
    private static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 8 || digits.count == 32 else { return nil }
        var out: [UInt8] = []
        for word in stride(from: 0, to: digits.count, by: 8) {
            var group: [UInt8] = []
            for i in stride(from: word, to: word + 8, by: 2) {
                guard let b = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
                group.append(b)
            }
            out += group.reversed()
        }
        return out
    }

    /// Whether a /proc/net/tcp address (hex, in the kernel's byte order: each 32-bit word
    /// little-endian here) is 0.0.0.0, 127.x.x.x, ::, ::1 or ::ffff:127.x.x.x.
    private static func isLoopbackOrAny(hex: Substring) -> Bool {
        let a = hex.uppercased()
        if a.count == 8 { return a == "00000000" || a.hasSuffix("7F") }
        guard a.count == 32 else { return false }
        if a == String(repeating: "0", count: 32) || a == String(repeating: "0", count: 24) + "01000000" { return true }
        // ::ffff:127.x.x.x: 0000…0000 FFFF0000 then the IPv4 word.
        return a.hasPrefix(String(repeating: "0", count: 16) + "FFFF0000") && a.hasSuffix("7F")
    }
}
