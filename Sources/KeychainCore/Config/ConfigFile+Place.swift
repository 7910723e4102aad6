#if canImport(Glibc)
import Glibc
#endif

/// Where the configuration file is (`ConfigFile`, docs/security.md "The configuration
/// file"): checked as sshd checks a user's files (its `secure_filename`), since whoever
/// could put another file at that path would choose the keychain and the timeouts.
extension ConfigFile {
    /// Opens the file at `path` after walking the path as given, one name at a time from `/`
    /// (or the working folder), each name opened relative to the folder before it
    /// (`O_PATH|O_NOFOLLOW`) and checked with `fstat`: every link must be the user's (or
    /// root's) and is followed by walking its target the same way (at most 40 links); every
    /// folder must be the user's or root's and not writable by its group or others, unless
    /// sticky (as /tmp), except the folders above the home folder. The file is then opened
    /// relative to the last folder checked, so what was checked is what is read.
    /// - Returns: the file's descriptor (close-on-exec, non-blocking), nil when there is no
    ///   file at `path`.
    /// - Throws: errSecParam (exit 206) naming what another account owns or can write.
    static func checkPlace(_ path: String) throws -> Int32? {
        let home = KeychainLocation.environment("HOME").flatMap { $0.hasPrefix("/") ? realPath($0) : nil }
        let oPath: Int32 = 0o10_000_000   // O_PATH on Linux
        var names = path.split(separator: "/").map(String.init)
        var real = path.hasPrefix("/") ? "/" : (realPath(".") ?? ".")
        var dir = open(path.hasPrefix("/") ? "/" : ".", oPath | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw unreadable(path, errno) }
        defer { if dir >= 0 { close(dir) } }
        // What is refused is said only when there is a file (a missing file costs nothing).
        var refused = folderError(dir, real, path: path, home: home)
        var links = 0
        while !names.isEmpty {
            let name = names.removeFirst()
            if name == "." { continue }
            let last = names.isEmpty
            let fd = openat(dir, name, oPath | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 {
                let e = errno
                if e == ENOENT || e == ENOTDIR { return nil }
                throw unreadable(path, e)
            }
            var st = stat()
            guard fstat(fd, &st) == 0 else {
                let e = errno
                close(fd)
                throw unreadable(path, e)
            }
            let here = name == ".." ? parent(of: real) : (real == "/" ? "/" + name : real + "/" + name)
            if (st.st_mode & S_IFMT) == S_IFLNK {
                defer { close(fd) }
                if st.st_uid != geteuid() && st.st_uid != 0 && refused == nil {
                    let what = last && links == 0 ? "is a link" : "is reached through \(here), a link"
                    refused = KeychainError(
                        errSecParam, "the configuration file \(path) \(what) that belongs to uid \(st.st_uid), not to you; not read",
                        hint: "another account could point it at a file of yours; remove it")
                }
                links += 1
                guard links <= 40 else { throw unreadable(path, ELOOP) }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlinkat(fd, "", &buffer, buffer.count - 1)
                guard n >= 0 else { throw unreadable(path, errno) }
                let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                names = target.split(separator: "/").map(String.init) + names
                if target.hasPrefix("/") {
                    let root = open("/", oPath | O_DIRECTORY | O_CLOEXEC)
                    guard root >= 0 else { throw unreadable(path, errno) }
                    close(dir)
                    dir = root
                    real = "/"
                }
                continue
            }
            if last {
                close(fd)
                // Non-blocking: a FIFO planted there must not hang kc (it is refused after).
                let file = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)
                guard file >= 0 else {
                    let e = errno
                    if e == ENOENT || e == ENOTDIR { return nil }
                    throw unreadable(path, e)
                }
                if let refused {
                    close(file)
                    throw refused
                }
                return file
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                close(fd)
                return nil
            }
            close(dir)
            dir = fd
            real = here
            refused = refused ?? folderError(dir, real, path: path, home: home)
        }
        return nil
    }

    /// Checks the folder open at `fd` (real path `real`): the user's or root's, and not
    /// writable by group or others unless sticky; a folder above `home` is not checked.
    /// - Returns: the error that refuses the file, nil when the folder is fine.
    private static func folderError(_ fd: Int32, _ real: String, path: String, home: String?) -> KeychainError? {
        if let home, real != home, home.hasPrefix(real == "/" ? "/" : real + "/") { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            return KeychainError(errSecIO, "cannot check the folder \(real): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        if st.st_uid != geteuid() && st.st_uid != 0 {
            return KeychainError(
                errSecParam, "the configuration file \(path) is in \(real), which belongs to uid \(st.st_uid), not to you; not read",
                hint: "another account could put any file there; keep the file in folders of your own")
        }
        if st.st_mode & 0o022 != 0 && st.st_mode & S_ISVTX == 0 {
            return KeychainError(
                errSecParam,
                "the configuration file \(path) is in \(real), which other users can write (mode \(String(st.st_mode & 0o777, radix: 8))); not read",
                hint: "run `chmod go-w \(real)` if you trust what is in it")
        }
        return nil
    }

    /// The errSecIO for a path that cannot be walked or opened.
    private static func unreadable(_ path: String, _ e: Int32) -> KeychainError {
        KeychainError(errSecIO, "cannot read the configuration file \(path): \(String(cString: strerror(e)))", cause: .errno(e))
    }

    /// The folder above `path` ("/" for "/").
    private static func parent(of path: String) -> String {
        path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "/"
    }

    /// `path` with every link resolved (realpath(3)); nil when it cannot be.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
