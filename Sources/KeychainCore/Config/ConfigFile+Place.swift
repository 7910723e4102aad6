#if canImport(Glibc)
import Glibc
#endif

/// Where the configuration file is (`ConfigFile`, docs/security.md "The configuration
/// file"): checked as sshd checks a user's files (its `secure_filename`), since whoever
/// could put another file at that path would choose the keychain and the timeouts.
extension ConfigFile {
    /// Checks the link at `path`, if it is one, and the folders it is in, before the file
    /// is opened: a link must be the user's (or root's), and each folder from the file's up
    /// to the home folder (or to `/` when the file is outside it) must be the user's or
    /// root's and not writable by its group or others, unless sticky (as /tmp).
    /// - Returns: false when there is no file at `path` (nothing else is checked then).
    /// - Throws: errSecParam (exit 206) naming what another account owns or can write.
    static func checkPlace(_ path: String) throws -> Bool {
        var link = stat()
        if lstat(path, &link) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR { return false }
            throw KeychainError(errSecIO, "cannot read the configuration file \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard let folder = realPath(parent) else {
            throw KeychainError(errSecIO, "cannot find the folder of the configuration file \(path)")
        }
        let home = KeychainLocation.environment("HOME").flatMap { $0.hasPrefix("/") ? realPath($0) : nil }
        var current = folder
        while true {
            var st = stat()
            guard stat(current, &st) == 0 else {
                let e = errno
                throw KeychainError(errSecIO, "cannot check the folder \(current): \(String(cString: strerror(e)))", cause: .errno(e))
            }
            if st.st_uid != geteuid() && st.st_uid != 0 {
                throw KeychainError(
                    errSecParam, "the configuration file \(path) is in \(current), which belongs to uid \(st.st_uid), not to you; not read",
                    hint: "another account could put any file there; keep the file in folders of your own")
            }
            if st.st_mode & 0o022 != 0 && st.st_mode & S_ISVTX == 0 {
                throw KeychainError(
                    errSecParam,
                    "the configuration file \(path) is in \(current), which other users can write (mode \(String(st.st_mode & 0o777, radix: 8))); not read",
                    hint: "run `chmod go-w \(current)` if you trust what is in it")
            }
            if current == home || current == "/" { break }
            let up = current.lastIndex(of: "/").map { $0 == current.startIndex ? "/" : String(current[..<$0]) } ?? "/"
            current = up
        }
        if (link.st_mode & S_IFMT) == S_IFLNK && link.st_uid != geteuid() && link.st_uid != 0 {
            throw KeychainError(
                errSecParam, "the configuration file \(path) is a link that belongs to uid \(link.st_uid), not to you; not read",
                hint: "another account could point it at a file of yours; remove it")
        }
        return true
    }

    /// `path` with every link resolved (realpath(3)); nil when it cannot be.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
