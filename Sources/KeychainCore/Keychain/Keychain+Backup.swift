#if canImport(Glibc)
import Glibc
#endif

extension Keychain {
    /// Writes a consistent copy of this keychain to `destination` while other processes go
    /// on using it: still encrypted, under the same password, nothing decrypted. The copy is
    /// built in a new 0600 file beside `destination`, checked as a keychain (header MAC,
    /// item count and accumulator against every row) with this keychain's keys, then moved
    /// into place, so `destination` is either absent, untouched or a checked backup.
    ///
    ///     let count = try keychain.backup(to: "/backups/login-2026-11-22.keychain-db")
    ///
    /// - Parameter replacing: overwrite an existing `destination` (never a folder or link).
    /// - Returns: the number of items in the backup.
    /// - Throws: errSecDuplicateKeychain when `destination` exists and `replacing` is
    ///   false; errSecParam for an unsafe folder; errSecDiskFull, errSecReadOnly, errSecIO.
    @discardableResult
    public func backup(to destination: String, replacing: Bool = false) throws -> Int {
        try requireFileKeychain("a backup into a file")
        let keys = try allKeys()
        var st = stat()
        if lstat(destination, &st) == 0 {
            guard replacing else {
                throw KeychainError(
                    errSecDuplicateKeychain, "\(destination) already exists",
                    hint: "choose another name, or pass --force to replace it")
            }
            guard st.st_mode & S_IFMT == S_IFREG else {
                throw KeychainError(errSecParam, "\(destination) exists and is not a regular file; not replaced")
            }
        }
        let folder = FileSafety.parentDirectory(of: destination)
        let name = destination.split(separator: "/").last.map(String.init) ?? destination
        let temporary = folder + "/." + name + ".partial-" + Sodium.randomBytes(6).map { String($0, radix: 16) }.joined()
        try FileSafety.createKeychainFile(at: temporary)
        var moved = false
        defer { if !moved { FileSafety.removeKeychainFiles(temporary) } }
        // Checked with this keychain's keys, as a fresh open would (the copy has the same
        // keychain id, key generation and wrapped master key), and closed before it moves.
        let count: Int
        do {
            let copy = Keychain(path: temporary, store: try store.copy(toNewFile: temporary), keys: keys)
            try copy.verify()
            count = try copy.itemCount()
        }
        guard fsyncPath(temporary) else { throw KeychainError(errSecIO, "cannot flush \(temporary) to disk") }
        if replacing {
            guard rename(temporary, destination) == 0 else { throw Self.fileError("cannot move the backup to", destination) }
        } else {
            // link(2) fails if the name appeared meanwhile: never overwrites.
            guard link(temporary, destination) == 0 else {
                if errno == EEXIST {
                    throw KeychainError(
                        errSecDuplicateKeychain, "\(destination) already exists",
                        hint: "choose another name, or pass --force to replace it")
                }
                throw Self.fileError("cannot create", destination)
            }
            unlink(temporary)
        }
        moved = true
        _ = fsyncPath(folder)
        return count
    }

    private func fsyncPath(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return fsync(fd) == 0
    }

    private static func fileError(_ what: String, _ path: String) -> KeychainError {
        let e = errno
        return KeychainError(
            e == EACCES || e == EROFS ? errSecReadOnly : e == ENOSPC ? errSecDiskFull : errSecIO,
            "\(what) \(path): \(String(cString: strerror(e)))", cause: .errno(e))
    }
}
