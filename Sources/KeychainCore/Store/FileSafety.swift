internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// File-system checks around a keychain file (`docs/security.md`, "Files"): files are
/// created 0600 with `O_CREAT|O_EXCL|O_NOFOLLOW` before SQLite sees them (SQLite would
/// create 0644, and -wal/-shm copy the main file's mode); an existing file is opened only
/// when it belongs to this user, has no group/other bits, sits in a folder no one else can
/// write, and starts like an SQLite database.
package enum FileSafety {
    /// Creates the parent folders (0700) and an empty keychain file (0600).
    /// - Throws: `errSecDuplicateKeychain` if the file exists, `errSecIO` otherwise.
    static func createKeychainFile(at path: String) throws {
        let parent = parentDirectory(of: path)
        try makeDirectories(parent)
        try checkDirectory(parent)
        try checkFilesystem(parent)
        let fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 {
            let e = errno
            if e == EEXIST {
                throw KeychainError(
                    errSecDuplicateKeychain, "\(path) already exists",
                    hint: "choose another path, or use the existing keychain")
            }
            throw KeychainError(
                e == EACCES || e == EROFS ? errSecReadOnly : errSecIO,
                "cannot create \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        close(fd)
    }

    /// Checks an existing keychain file before SQLite opens it.
    /// - Parameter readingIt: false leaves out the checks that open the file itself (its
    ///   header, its magic), for a process that holds it open already: closing any
    ///   descriptor of a file drops every POSIX lock the process holds on it, SQLite's
    ///   included (`SQLiteItemStore.freshConnection`).
    static func checkKeychainFile(at path: String, readingIt: Bool = true) throws {
        var st = stat()
        if lstat(path, &st) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR {
                throw KeychainError(
                    errSecNoSuchKeychain, "no keychain at \(path)",
                    hint: "create one with `kc create`, or choose another with -k or KC_KEYCHAIN")
            }
            throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            throw KeychainError(errSecParam, "\(path) is a symbolic link; kc opens keychains only by their real path")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainError(errSecDecode, "\(path) is not a regular file, so not a kc keychain")
        }
        guard st.st_uid == geteuid() else {
            throw KeychainError(
                errSecParam, "\(path) belongs to uid \(st.st_uid), not to you",
                hint: "a keychain is opened only by its owner")
        }
        // A file of yours that is not even an SQLite database (a typo such as a text file)
        // is named as such before any mode advice: `chmod` would be the wrong hint.
        if readingIt, st.st_mode & 0o077 != 0, hasDatabaseHeader(path) == false {
            throw KeychainError(
                errSecDecode, "\(path) is not a kc keychain (no database header)",
                hint: "check the path given with -k or KC_KEYCHAIN")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw KeychainError(
                errSecParam,
                "\(path) can be read or written by other users (mode \(String(st.st_mode & 0o777, radix: 8)))",
                hint: "run `chmod 600 \(path)*` if you trust its contents")
        }
        // The -wal and -shm hold recent pages (and, until a checkpoint, old master-key
        // wraps): the same rules apply to them.
        for suffix in ["-wal", "-shm"] {
            var side = stat()
            guard lstat(path + suffix, &side) == 0 else { continue }
            guard (side.st_mode & S_IFMT) == S_IFREG, side.st_uid == geteuid(), side.st_mode & 0o077 == 0 else {
                throw KeychainError(
                    errSecParam, "\(path)\(suffix) is not a private file of yours (mode \(String(side.st_mode & 0o777, radix: 8)))",
                    hint: "run `chmod 600 \(path) \(path)-wal \(path)-shm` if you trust their contents")
            }
        }
        try checkDirectory(parentDirectory(of: path))
        try checkFilesystem(parentDirectory(of: path))
        if readingIt { try checkMagic(path, size: Int(st.st_size)) }
    }

    /// A folder that others can write lets them plant -wal, -shm or symlinks: refused.
    static func checkDirectory(_ dir: String) throws {
        var st = stat()
        guard stat(dir, &st) == 0 else {
            throw KeychainError(errSecNoSuchKeychain, "folder \(dir) does not exist")
        }
        if st.st_mode & 0o022 != 0 {
            throw KeychainError(
                errSecParam,
                "folder \(dir) can be written by other users (mode \(String(st.st_mode & 0o777, radix: 8)))",
                hint: "keep keychains in a folder only you can write, such as ~/.local/share/kc")
        }
        if st.st_uid != geteuid() && st.st_uid != 0 {
            throw KeychainError(errSecParam, "folder \(dir) belongs to uid \(st.st_uid), not to you")
        }
    }

    /// SQLite's WAL needs shared memory that network file systems do not provide.
    static func checkFilesystem(_ dir: String) throws {
        var fs = statfs()
        guard statfs(dir, &fs) == 0 else { return }
        let type = UInt32(truncatingIfNeeded: fs.f_type)
        let network: [UInt32: String] = [0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2"]
        if let name = network[type] {
            throw KeychainError(
                errSecParam, "\(dir) is on \(name); kc keychains need a local file system",
                hint: "keep the keychain on a local disk (KC_KEYCHAIN or -k)")
        }
    }

    /// Whether the file starts with SQLite's header; nil when it cannot be read.
    private static func hasDatabaseHeader(_ path: String) -> Bool? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        guard n >= 0 else { return nil }
        return n == 16 && header == Array("SQLite format 3".utf8) + [0]
    }

    private static func checkMagic(_ path: String, size: Int) throws {
        guard size > 0 else {
            throw KeychainError(errSecDecode, "\(path) is empty, not a kc keychain")
        }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 100) }
        let magic = Array("SQLite format 3".utf8) + [0]
        guard n == 100, Array(header[0..<16]) == magic else {
            throw KeychainError(errSecDecode, "\(path) is not a kc keychain (no database header)")
        }
    }

    /// Creates missing folders with mode 0700.
    package static func makeDirectories(_ dir: String) throws {
        if dir.isEmpty || dir == "/" { return }
        var st = stat()
        if stat(dir, &st) == 0 { return }
        try makeDirectories(parentDirectory(of: dir))
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw KeychainError(errSecIO, "cannot create folder \(dir): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
    }

    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// Removes a file and its -wal and -shm (used only to undo a failed create, here and
    /// by the Secret Service provider's CreateCollection).
    package static func removeKeychainFiles(_ path: String) {
        unlink(path)
        unlink(path + "-wal")
        unlink(path + "-shm")
    }
}
