import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets in plaintext (`kc export -o`, `kc inject -o`): created 0600 and
/// written whole, then flushed to disk. Never over an existing file unless `force`; then
/// the new content goes to a new private file beside it (`FileReplacement`: unnamed while
/// it is written), which is renamed over the old one,
/// so a file someone else owns or holds open never receives a secret.
enum PrivateFile {
    static func write(_ bytes: [UInt8], to path: String, force: Bool) throws {
        guard force else {
            try writeNew(bytes, to: path)
            return
        }
        var st = stat()
        if lstat(path, &st) == 0 && st.st_mode & S_IFMT != S_IFREG {
            throw KeychainError(errSecParam, "\(path) is not a regular file; not replaced")
        }
        try FileReplacement.replace(path, with: bytes, mode: 0o600, owner: nil)
    }

    /// Creates `path` (O_EXCL, 0600, no link followed) and writes it whole.
    private static func writeNew(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            if e == EEXIST {
                throw KeychainError(errSecDuplicateItem, "\(path) already exists", hint: "choose another name, or pass --force")
            }
            throw KeychainError(
                e == EACCES || e == EROFS ? errSecReadOnly : errSecIO, "cannot create \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(path) }
        }
        guard Report.writeAll(fd, bytes) else {
            let e = errno
            throw KeychainError(e == ENOSPC ? errSecDiskFull : errSecIO, "cannot write \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        guard fsync(fd) == 0 else { throw KeychainError(errSecIO, "cannot flush \(path) to disk") }
        ok = true
    }
}
