import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file that holds secrets (AWS's shared files, a kubeconfig, `kc export -o
/// --force`) with new content, so that no copy of the content is ever left under another
/// name: the new text is written into an unnamed file (`O_TMPFILE`) in the target's folder,
/// given the old file's mode and owner, flushed, and only then linked into the folder and
/// renamed over the target. A process killed while it writes leaves nothing behind; the
/// name exists only between the link and the rename. Where the folder's file system
/// refuses `O_TMPFILE`, a named 0600 file is written instead (`.NAME.kc-` and 12 hex
/// digits); any such file of the target's, left by a run that was killed, is removed on
/// the next rewrite.
///
///     try FileReplacement.replace("/home/alice/.aws/credentials", with: bytes, mode: 0o600, owner: (1000, 1000))
///
/// - Throws: `errSecReadOnly` when the folder cannot be written, `errSecDiskFull` or
///   `errSecIO` when the file cannot be written, `errSecParam` when the old owner cannot
///   be kept; the target is unchanged then.
enum FileReplacement {
    /// The infix of kc's named temporary files: `.NAME.kc-` then `suffixLength` hex digits.
    static let infix = ".kc-"
    static let suffixLength = 12

    /// `__O_TMPFILE` (the same on every Linux architecture Swift runs on) with
    /// `O_DIRECTORY`, as glibc defines `O_TMPFILE`.
    static let tmpfileFlag: Int32 = 0o20000000 | O_DIRECTORY

    /// Replaces `path` with `bytes`, the file given `mode` and, when `owner` is given, that
    /// uid and gid, before it takes the old file's place.
    static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, owner: (uid: uid_t, gid: gid_t)?) throws {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw failure(errno, "cannot open the folder of \(path)") }
        defer { close(directory) }
        try replace(name, in: directory, path: path, with: bytes, mode: mode, owner: owner, expected: nil)
    }

    /// Replaces the file `name` in the folder open at `directory` (`HeldFolder`'s: every
    /// step relative to it, nothing by path), as `replace(_:with:mode:owner:)` does; with
    /// `expected`, the name must still be that file (device, inode) just before the rename
    /// (`(0, 0)`: still no file). `group` alone is given when `owner.uid` is `uid_t.max`.
    static func replace(
        _ name: String, in directory: Int32, path: String, with bytes: [UInt8], mode: mode_t, owner: (uid: uid_t, gid: gid_t)?,
        expected: (dev: UInt, ino: UInt)?
    ) throws {
        removeStale(name, in: directory)
        let temporary = "." + name + infix + ItemPrinter.hex((0..<suffixLength / 2).map { _ in UInt8.random(in: 0...255) })
        var named = false
        var fd = openat(directory, ".", tmpfileFlag | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 {
            // EISDIR / EOPNOTSUPP / EINVAL: a kernel or file system without O_TMPFILE.
            guard [EISDIR, EOPNOTSUPP, EINVAL, ENOENT].contains(errno) else { throw failure(errno, "cannot write beside \(path)") }
            fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw failure(errno, "cannot write beside \(path)") }
            named = true
        }
        var linked = named
        var done = false
        defer {
            close(fd)
            if linked && !done { unlinkat(directory, temporary, 0) }
        }
        guard Report.writeAll(fd, bytes) else { throw failure(errno, "cannot write beside \(path)") }
        // The old owner (root importing into a user's file keeps it the user's), then the old
        // mode: both before the file has a name.
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure(errno, "cannot write beside \(path)") }
        if let owner, (st.st_uid != owner.uid && owner.uid != uid_t.max) || st.st_gid != owner.gid {
            guard fchown(fd, owner.uid, owner.gid) == 0 else {
                throw KeychainError(
                    errSecParam,
                    "cannot give the new \(path) its owner (uid \(owner.uid), gid \(owner.gid)): \(String(cString: strerror(errno))); nothing changed")
            }
        }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else { throw failure(errno, "cannot write beside \(path)") }
        if !named {
            guard link(fd, directory, temporary) else { throw failure(errno, "cannot write beside \(path)") }
            linked = true
        }
        if let expected {
            // What was read is what is replaced: a file swapped in meanwhile is left alone.
            var now = stat()
            let found = fstatat(directory, name, &now, AT_SYMLINK_NOFOLLOW) == 0 ? (UInt(now.st_dev), UInt(now.st_ino)) : (0, 0)
            guard found == expected else { throw KeychainError(errSecParam, "\(path) changed while kc rewrote it; nothing changed") }
        }
        guard renameat(directory, temporary, directory, name) == 0 else { throw failure(errno, "cannot replace \(path)") }
        done = true
        _ = fsync(directory)
    }

    /// Gives the unnamed file `fd` the name `name` in `directory`: through /proc/self/fd,
    /// else with AT_EMPTY_PATH (which needs CAP_DAC_READ_SEARCH before Linux 6.10).
    private static func link(_ fd: Int32, _ directory: Int32, _ name: String) -> Bool {
        if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", directory, name, AT_SYMLINK_FOLLOW) == 0 { return true }
        let atEmptyPath: Int32 = 0x1000   // AT_EMPTY_PATH, which Glibc's module does not export
        return linkat(fd, "", directory, name, atEmptyPath) == 0
    }

    /// Removes the regular files `.NAME.kc-XXXXXXXXXXXX` in `directory` that this user
    /// owns (any, for root: its killed rewrite of a user's file left one of that user's):
    /// what a killed rewrite of NAME left.
    static func removeStale(_ name: String, in directory: Int32) {
        let prefix = "." + name + infix
        let copy = fcntl(directory, F_DUPFD_CLOEXEC, 0)   // close-on-exec from birth, as every descriptor here
        guard copy >= 0, let dir = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return
        }
        defer { closedir(dir) }
        var stale: [String] = []
        while let entry = readdir(dir) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard entryName.hasPrefix(prefix) else { continue }
            let suffix = entryName.dropFirst(prefix.count)
            guard suffix.count == suffixLength, suffix.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { continue }
            stale.append(entryName)
        }
        // Only kc's own leftovers: one name, and this user's, or (root rewriting a user's
        // file in that user's folder) the folder owner's. Root in a shared folder (`kc
        // export -o /tmp/x --force`) removed another account's file of that name.
        var folder = stat()
        let folderOwner: uid_t? = fstat(directory, &folder) == 0 ? folder.st_uid : nil
        for entryName in stale {
            var st = stat()
            guard fstatat(directory, entryName, &st, AT_SYMLINK_NOFOLLOW) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_nlink == 1 else { continue }
            if st.st_uid == geteuid() || (geteuid() == 0 && st.st_uid == folderOwner) { unlinkat(directory, entryName, 0) }
        }
    }

    static func failure(_ e: Int32, _ what: String) -> KeychainError {
        let status = e == EACCES || e == EROFS || e == EPERM ? errSecReadOnly : e == ENOSPC ? errSecDiskFull : errSecIO
        return KeychainError(status, "\(what): \(String(cString: strerror(e)))", cause: .errno(e))
    }
}
