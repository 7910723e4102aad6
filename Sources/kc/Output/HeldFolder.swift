import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

@_silgen_name("setfsuid") private func setFSUID(_ uid: uid_t) -> Int32
@_silgen_name("setfsgid") private func setFSGID(_ gid: gid_t) -> Int32

/// The folder of a file that holds a user's secrets (AWS's shared files, a kubeconfig),
/// held open by descriptor from the moment it is checked until the file is replaced: what
/// was checked is what is read and what is written, whatever is renamed or linked meanwhile.
///
/// The path is walked one name at a time from `/` (or the working folder), each name opened
/// relative to the folder before it without following links (`O_PATH|O_NOFOLLOW`, as
/// `ConfigFile.checkPlace` does). A link is followed only when it is root's or, for a user,
/// the user's own: root (sudo keeping HOME) never follows a link a user planted. The folder
/// itself must not be a link. Its owner is whose file it is (the *owner*): a user's own
/// folder, or any user's when kc runs as root; every folder above it is root's or the
/// owner's, and none is writable by its group or others unless sticky (as /tmp). The file
/// must be the owner's, a regular file with one name. When root works in another user's
/// folder, every file operation runs with that user's file-system uid and gid (setfsuid,
/// setfsgid): root can never write where the user could not, and what it creates is theirs.
final class HeldFolder {
    /// The file's path as given, for messages.
    let path: String
    /// The file's name in the folder.
    let name: String
    /// The folder (`O_RDONLY|O_DIRECTORY`), or -1 while it does not exist.
    private(set) var fd: Int32
    /// The folder above it (`O_PATH`), kept while the folder does not exist, else -1.
    private var parent: Int32
    /// The folder's name in `parent`.
    private let folderName: String
    /// Whose folder it is: the ids the file work runs with.
    let owner: (uid: uid_t, gid: gid_t)

    /// Walks to the folder of `path` and checks it. - Throws: errSecParam naming what is
    /// refused (a link, another user's folder, a folder others can write), errSecIO.
    init(file path: String) throws {
        self.path = path
        let slash = path.lastIndex(of: "/")
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let folder = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        guard !name.isEmpty, name != ".", name != ".." else { throw KeychainError(errSecParam, "\(path) does not name a file") }
        var names = folder.split(separator: "/").map(String.init).filter { $0 != "." }
        let last = names.popLast()
        folderName = last ?? "."
        let oPath: Int32 = 0o10_000_000   // O_PATH on Linux
        var dir = open(folder.hasPrefix("/") ? "/" : ".", oPath | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw Self.failure(path, errno) }
        var above: [stat] = []
        var links = 0
        func record(_ d: Int32) throws {
            var st = stat()
            guard fstat(d, &st) == 0 else { throw Self.failure(path, errno) }
            above.append(st)
        }
        do {
            try record(dir)
            while !names.isEmpty {
                let part = names.removeFirst()
                let next = openat(dir, part, oPath | O_NOFOLLOW | O_CLOEXEC)
                guard next >= 0 else { throw Self.failure(path, errno) }
                var st = stat()
                guard fstat(next, &st) == 0 else {
                    close(next)
                    throw Self.failure(path, errno)
                }
                if st.st_mode & S_IFMT == S_IFLNK {
                    defer { close(next) }
                    guard st.st_uid == 0 || (st.st_uid == geteuid() && geteuid() != 0) else {
                        throw KeychainError(
                            errSecParam, "\(path) is reached through \(part), a link that belongs to uid \(st.st_uid): kc does not rewrite it",
                            hint: "give the file's real path")
                    }
                    links += 1
                    guard links <= 40 else { throw Self.failure(path, ELOOP) }
                    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                    let n = readlinkat(next, "", &buffer, buffer.count - 1)
                    guard n >= 0 else { throw Self.failure(path, errno) }
                    let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    names = target.split(separator: "/").map(String.init).filter { $0 != "." } + names
                    if target.hasPrefix("/") {
                        let root = open("/", oPath | O_DIRECTORY | O_CLOEXEC)
                        guard root >= 0 else { throw Self.failure(path, errno) }
                        close(dir)
                        dir = root
                    }
                    continue
                }
                guard st.st_mode & S_IFMT == S_IFDIR else {
                    close(next)
                    throw Self.failure(path, ENOTDIR)
                }
                close(dir)
                dir = next
                above.append(st)
            }
        } catch {
            close(dir)
            throw error
        }
        // The folder itself: opened once, never through a link.
        var folderFD: Int32 = -1
        if let last {
            folderFD = openat(dir, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        } else {
            folderFD = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        let e = errno
        var st = stat()
        if folderFD >= 0 {
            guard fstat(folderFD, &st) == 0 else {
                close(folderFD)
                close(dir)
                throw Self.failure(path, errno)
            }
        } else if e == ENOENT {
            // Made on the first write, as the owner of the folder above.
            st = above.last ?? stat()
        } else {
            var lst = stat()
            let isLink = last.map { fstatat(dir, $0, &lst, AT_SYMLINK_NOFOLLOW) == 0 && lst.st_mode & S_IFMT == S_IFLNK } ?? false
            close(dir)
            if isLink {
                throw KeychainError(
                    errSecParam, "the folder of \(path) is a link: kc rewrites a file only in a folder it can hold",
                    hint: "give the file's real path")
            }
            throw Self.failure(path, e == ELOOP ? ELOOP : e)
        }
        let euid = geteuid()
        let refusal: KeychainError? = {
            if euid != 0 && st.st_uid != euid {
                return KeychainError(errSecParam, "the folder of \(path) belongs to uid \(st.st_uid), not to you: kc does not rewrite it")
            }
            if st.st_mode & 0o022 != 0 && (folderFD >= 0 || st.st_mode & S_ISVTX == 0) {
                return KeychainError(
                    errSecParam, "the folder of \(path) can be written by other users (mode \(String(st.st_mode & 0o777, radix: 8))): kc does not rewrite it",
                    hint: "run `chmod go-w` on it")
            }
            // Every folder above: root's or the owner's, not writable by others unless sticky.
            for a in above.dropLast(folderFD >= 0 ? 0 : 1) {
                if a.st_uid != 0 && a.st_uid != st.st_uid || (a.st_mode & 0o022 != 0 && a.st_mode & S_ISVTX == 0) {
                    return KeychainError(errSecParam, "\(path) is reached through a folder another user can change: kc does not rewrite it")
                }
            }
            return nil
        }()
        if let refusal {
            if folderFD >= 0 { close(folderFD) }
            close(dir)
            throw refusal
        }
        // The group is the owner's own primary group when the folder is yet to be made: the
        // folder above may be another group's (a home of group 0), whose files the owner's
        // own later rewrite, which keeps a file's group, could not make.
        owner = (st.st_uid, folderFD >= 0 ? st.st_gid : Self.primaryGroup(of: st.st_uid) ?? st.st_gid)
        fd = folderFD
        if folderFD >= 0 {
            close(dir)
            parent = -1
        } else {
            parent = dir
        }
    }

    /// The primary group of `uid` in the user database, nil when it has no entry.
    static func primaryGroup(of uid: uid_t) -> gid_t? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_gid
    }

    deinit {
        if fd >= 0 { close(fd) }
        if parent >= 0 { close(parent) }
    }

    /// Runs `body` with the owner's file-system ids when kc runs as root for another user
    /// (restored after); as is otherwise.
    func asOwner<T>(_ body: () throws -> T) rethrows -> T {
        guard geteuid() == 0, owner.uid != 0 else { return try body() }
        _ = setFSGID(owner.gid)
        _ = setFSUID(owner.uid)
        defer {
            _ = setFSUID(0)
            _ = setFSGID(getegid())
        }
        return try body()
    }

    /// The file as read: its bytes, mode, group and identity.
    struct Content {
        var bytes: [UInt8]
        let mode: mode_t
        let gid: gid_t
        let identity: (dev: UInt, ino: UInt)
    }

    /// Reads the file (at most `limit` bytes), as the owner; nil when there is none.
    /// - Throws: errSecParam for a link, not a regular file, more than one name, another
    ///   user's file; errSecDataTooLarge; errSecIO.
    func read(limit: Int) throws -> Content? {
        guard fd >= 0 else { return nil }
        return try asOwner {
            let file = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            guard file >= 0 else {
                let e = errno
                if e == ENOENT { return nil }
                if e == ELOOP {
                    throw KeychainError(
                        errSecParam, "\(path) is a link: rewriting it would leave the secret in the file it points to",
                        hint: "give the file's real path (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, or the kubeconfig's) and run again")
                }
                throw Self.failure(path, e)
            }
            defer { close(file) }
            var st = stat()
            guard fstat(file, &st) == 0 else { throw Self.failure(path, errno) }
            guard st.st_mode & S_IFMT == S_IFREG else { throw KeychainError(errSecParam, "\(path) is not a regular file") }
            // The rewrite renames a new file over the name: the other names would keep the secret.
            guard st.st_nlink == 1 else {
                throw KeychainError(errSecParam, "\(path) has \(st.st_nlink) hard links: the other names would keep the secret")
            }
            guard st.st_uid == owner.uid else {
                throw KeychainError(errSecParam, "\(path) belongs to uid \(st.st_uid), not to its folder's owner (uid \(owner.uid)): kc does not rewrite it")
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            defer { for i in chunk.indices { chunk[i] = 0 } }
            while true {
                let n = Glibc.read(file, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw Self.failure(path, errno) }
                if n == 0 { break }
                bytes.append(contentsOf: chunk[0..<n])
                guard bytes.count <= limit else { throw KeychainError(errSecDataTooLarge, "\(path) is larger than \(limit >> 20) MiB") }
            }
            return Content(bytes: bytes, mode: st.st_mode & 0o7777, gid: st.st_gid, identity: (UInt(st.st_dev), UInt(st.st_ino)))
        }
    }

    /// Replaces the file with `bytes` (`FileReplacement`), as the owner, with `mode` and the
    /// group `gid`; `expected` is the identity of the file read (nil: there was none), checked
    /// again just before the rename. Makes the folder (0700) when it does not exist.
    func replace(with bytes: [UInt8], mode: mode_t, gid: gid_t?, expected: (dev: UInt, ino: UInt)?) throws {
        try asOwner {
            if fd < 0 {
                guard mkdirat(parent, folderName, 0o700) == 0 || errno == EEXIST else {
                    throw FileReplacement.failure(errno, "cannot make the folder of \(path)")
                }
                let made = openat(parent, folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard made >= 0 else { throw FileReplacement.failure(errno, "cannot open the folder of \(path)") }
                var st = stat()
                guard fstat(made, &st) == 0, st.st_uid == owner.uid, st.st_mode & 0o022 == 0 else {
                    close(made)
                    throw KeychainError(errSecParam, "the folder of \(path) changed while kc wrote it; nothing written")
                }
                fd = made
                close(parent)
                parent = -1
            }
            try FileReplacement.replace(name, in: fd, path: path, with: bytes, mode: mode, owner: gid.map { (uid_t.max, $0) }, expected: expected ?? (0, 0))
        }
    }

    /// Creates `NAME` + `suffix` beside the file (O_EXCL, 0600, as the owner) holding
    /// `bytes`: the backup a user asked for. - Throws: errSecDuplicateItem when it exists.
    func createBeside(suffix: String, _ bytes: [UInt8]) throws {
        guard fd >= 0 else { throw Self.failure(path, ENOENT) }
        let backup = name + suffix
        try asOwner {
            let file = openat(fd, backup, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard file >= 0 else {
                let e = errno
                if e == EEXIST { throw KeychainError(errSecDuplicateItem, "\(path)\(suffix) already exists", hint: "move it away and run again") }
                throw FileReplacement.failure(e, "cannot create \(path)\(suffix)")
            }
            defer { close(file) }
            guard Report.writeAll(file, bytes), fsync(file) == 0 else {
                let e = errno
                unlinkat(fd, backup, 0)
                throw FileReplacement.failure(e, "cannot write \(path)\(suffix)")
            }
        }
    }

    static func failure(_ path: String, _ e: Int32) -> KeychainError {
        KeychainError(e == EACCES ? errSecReadOnly : errSecIO, "cannot read \(path): \(String(cString: strerror(e)))", cause: .errno(e))
    }
}
