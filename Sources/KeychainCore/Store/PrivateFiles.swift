#if canImport(Glibc)
import Glibc
#endif

/// The small private files kc keeps beside keychains (team files, team checkpoints, the key
/// generations the agent has seen): created 0600 in 0700 folders, never through a symbolic
/// link, flushed to disk; read only when they are regular files of this user that no one
/// else can read or write.
package enum PrivateFiles {
    /// `$XDG_STATE_HOME/kc` (an absolute one), else `$HOME/.local/state/kc`: where kc keeps
    /// what it must remember of keychains between runs.
    package static var stateDirectory: String {
        if let xdg = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") { return xdg + "/kc" }
        return (getenv("HOME").map { String(cString: $0) } ?? "/") + "/.local/state/kc"
    }

    /// The largest team file or checkpoint read (both are well under 1 KiB).
    package static let maximumSize = 64 * 1024

    /// Creates `path` exclusively (0600) with `bytes`, its folders (0700) when missing, and
    /// flushes file and folder.
    /// - Throws: `errSecDuplicateKeychain` when it exists; `errSecReadOnly`, `errSecDiskFull`
    ///   or `errSecIO` when it cannot be written.
    package static func create(_ path: String, bytes: [UInt8]) throws {
        let folder = FileSafety.parentDirectory(of: path)
        try FileSafety.makeDirectories(folder)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            if e == EEXIST {
                throw KeychainError(errSecDuplicateKeychain, "\(path) already exists")
            }
            throw KeychainError(
                e == EACCES || e == EROFS ? errSecReadOnly : errSecIO,
                "cannot create \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(path) }
        }
        try writeAll(fd, bytes, path: path)
        ok = true
        syncDirectory(folder)
    }

    /// Replaces `path` atomically with `bytes`: a new 0600 file beside it, written and
    /// flushed, renamed over it, then the folder flushed. Folders (0700) are made when missing.
    /// - Throws: `errSecReadOnly`, `errSecDiskFull` or `errSecIO`.
    package static func replace(_ path: String, bytes: [UInt8]) throws {
        let folder = FileSafety.parentDirectory(of: path)
        try FileSafety.makeDirectories(folder)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary = folder + "/." + name + ".tmp-" + Hex.encode(Sodium.randomBytes(6))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            throw KeychainError(
                e == EACCES || e == EROFS ? errSecReadOnly : errSecIO,
                "cannot create \(temporary): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        var ok = false
        defer { if !ok { unlink(temporary) } }
        do {
            defer { close(fd) }
            try writeAll(fd, bytes, path: temporary)
        }
        guard rename(temporary, path) == 0 else {
            let e = errno
            throw KeychainError(
                e == EACCES || e == EROFS ? errSecReadOnly : errSecIO,
                "cannot replace \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        ok = true
        syncDirectory(folder)
    }

    /// The bytes of a private file, nil when there is none.
    /// - Throws: `errSecParam` for a symbolic link, a file of another user or one others
    ///   can read or write; `errSecDecode` for something that is not a regular file or is
    ///   larger than `limit`; `errSecIO` when it cannot be read.
    package static func read(_ path: String, limit: Int = maximumSize) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT || e == ENOTDIR { return nil }
            if e == ELOOP { throw KeychainError(errSecParam, "\(path) is a symbolic link; kc reads team files only by their real path") }
            throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainError(errSecDecode, "\(path) is not a regular file")
        }
        guard st.st_uid == geteuid() else {
            throw KeychainError(errSecParam, "\(path) belongs to uid \(st.st_uid), not to you")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw KeychainError(
                errSecParam, "\(path) can be read or written by other users (mode \(String(st.st_mode & 0o777, radix: 8)))",
                hint: "run `chmod 600 \(path)` if you trust its contents")
        }
        guard st.st_size <= limit else {
            throw KeychainError(errSecDecode, "\(path) is \(st.st_size) bytes, too large for one of kc's private files")
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw KeychainError(errSecIO, "cannot read \(path): \(n == 0 ? "it shrank while read" : String(cString: strerror(errno)))")
            }
            done += n
        }
        return bytes
    }

    /// Writes every byte and flushes the file.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let e = errno
                throw KeychainError(
                    e == ENOSPC ? errSecDiskFull : errSecIO,
                    "cannot write \(path): \(String(cString: strerror(e)))", cause: .errno(e))
            }
            done += n
        }
        guard fsync(fd) == 0 else {
            throw KeychainError(errSecIO, "cannot flush \(path) to disk: \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
    }

    /// Flushes a folder, so that a created or renamed entry survives a crash (best effort).
    private static func syncDirectory(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
