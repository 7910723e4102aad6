import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads whole files and stdin into secure memory, refusing input larger than a limit
/// before reading all of it.
enum Readers {
    /// Reads all of `fd` (at most `limit` bytes).
    static func readAll(_ fd: Int32, limit: Int, what: String) throws -> SecureBytes {
        var capacity = 4096
        var buffer = try SecureBytes(count: capacity)
        var length = 0
        while true {
            if length == capacity {
                guard capacity <= limit else {
                    throw KeychainError(errSecDataTooLarge, "\(what) is larger than \(limit) bytes")
                }
                let bigger = try SecureBytes(count: min(capacity * 2, limit + 1))
                buffer.withUnsafeBytes { old in bigger.withUnsafeMutableBytes { $0.copyMemory(from: old) } }
                capacity = bigger.count
                buffer = bigger
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + length, capacity - length) }
            if n < 0 {
                if errno == EINTR { continue }
                throw KeychainError(errSecIO, "cannot read \(what): \(String(cString: strerror(errno)))", cause: .errno(errno))
            }
            if n == 0 { break }
            length += n
            if length > limit { throw KeychainError(errSecDataTooLarge, "\(what) is larger than \(limit) bytes") }
        }
        return try buffer.copy(prefix: length)
    }

    /// Reads a file. Warns when a password file can be read by others.
    static func readFile(_ path: String, limit: Int, what: String, warnIfShared: Bool = false) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw KeychainError(e == ENOENT ? errSecParam : errSecIO, "cannot read \(what) \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                throw KeychainError(errSecParam, "\(what) \(path) is a folder")
            }
            if warnIfShared && st.st_mode & 0o077 != 0 {
                Report.note("warning: \(path) can be read by other users; chmod 600 it")
            }
        }
        return try readAll(fd, limit: limit, what: "\(what) \(path)")
    }

    /// The same bytes without one trailing newline (passwords from files and stdin).
    static func droppingOneNewline(_ bytes: consuming SecureBytes) throws -> SecureBytes {
        let endsWithNewline = bytes.withUnsafeBytes { $0.last == 0x0A }
        guard endsWithNewline else { return bytes }
        return try bytes.copy(prefix: bytes.count - 1)
    }
}
