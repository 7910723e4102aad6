import Foundation
import KeychainCore

/// TCP on 127.0.0.1 for the tests' servers (swtpm, PgBouncer, the TPM bus recorder): a
/// connection, a wait for a server to listen, a listener of their own. Every socket is
/// close-on-exec from birth.
public enum LoopbackTCP {
    /// A connected socket to 127.0.0.1:`port`, or -1.
    public static func connect(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let ok = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !ok {
            close(fd)
            return -1
        }
        return fd
    }

    /// Whether something accepts connections on 127.0.0.1:`port` within `seconds`.
    public static func waitForListener(_ port: Int, seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            let fd = connect(port)
            if fd >= 0 {
                close(fd)
                return true
            }
            usleep(50_000)
        }
        return false
    }

    /// A socket bound to 127.0.0.1:`port` (0: any) and listening, which never accepts:
    /// connections to it complete and then hear nothing. Returns it and its port.
    public static func listener(_ port: Int) throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            close(fd)
            throw KeychainError(errSecIO, "cannot listen on port \(port): errno \(errno)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
