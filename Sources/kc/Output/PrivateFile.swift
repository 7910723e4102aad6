import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets in plaintext (`kc export -o`, `kc inject -o`): created 0600,
/// never over an existing file unless `force` (and then only a regular file, made private
/// again), written whole and flushed to disk.
enum PrivateFile {
    static func write(_ bytes: [UInt8], to path: String, force: Bool) throws {
        var flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC
        if force {
            var st = stat()
            if lstat(path, &st) == 0 && st.st_mode & S_IFMT != S_IFREG {
                throw KeychainError(errSecParam, "\(path) is not a regular file; not replaced")
            }
            flags |= O_TRUNC
        } else {
            flags |= O_EXCL
        }
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else {
            let e = errno
            if e == EEXIST {
                throw KeychainError(errSecDuplicateItem, "\(path) already exists", hint: "choose another name, or pass --force")
            }
            throw KeychainError(e == EACCES || e == EROFS ? errSecReadOnly : errSecIO, "cannot create \(path): \(String(cString: strerror(e)))")
        }
        defer { close(fd) }
        // An existing file replaced with --force keeps its mode otherwise: make it private.
        fchmod(fd, 0o600)
        guard Report.writeAll(fd, bytes) else {
            let e = errno
            throw KeychainError(e == ENOSPC ? errSecDiskFull : errSecIO, "cannot write \(path): \(String(cString: strerror(e)))")
        }
        guard fsync(fd) == 0 else { throw KeychainError(errSecIO, "cannot flush \(path) to disk") }
    }
}
