import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The labels clients give collections (`Set Collection.Label`, read-write in the
/// specification). A collection's path is its keychain's name and stays so; its label is
/// that name until a client sets another, which is kept beside the keychains in
/// `collection-labels/ID` (the collection's path element; a 0600 file in a 0700 folder,
/// checked: a folder that is a link, or that group or others may use, is not used),
/// since the keychain file has no place for it: a label is shown while the keychain is
/// locked, and kc's files encrypt everything but their keys. Setting the name back removes
/// the file (docs/secret-service.md, "Collections, locking and prompts").
enum CollectionLabels {
    /// The longest label kept, in UTF-8 bytes.
    static let maximumBytes = 4096

    /// The folder of the labels set.
    static var folder: String { KeychainLocation.directory + "/collection-labels" }

    /// Opens the folder, as kc requires of its keychain folders: not a link, owned by this
    /// user, no permission for group or others. Files are then opened and renamed relative
    /// to it, so nobody can swap the folder between the check and the use.
    /// - Returns: the descriptor, or why the folder is not used (nil reason: it is missing).
    private static func openFolder() -> (fd: Int32?, refused: String?) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            return (nil, errno == ENOENT ? nil : "it cannot be opened as a folder (\(String(cString: strerror(errno)))): a link is not followed")
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            close(fd)
            return (nil, "it must be yours with no permission for group or others (chmod 700 \(folder))")
        }
        return (fd, nil)
    }

    /// The label of `collection`: the one a client set, else its keychain's name (also
    /// when the file is not one this provider wrote: a link, another user's, too large,
    /// not UTF-8, or in a folder that is a link or that others can write to).
    static func label(of collection: KeychainCollections.Collection) -> String {
        guard let dir = openFolder().fd else { return collection.name }
        defer { close(dir) }
        let fd = openat(dir, collection.id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return collection.name }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_size <= maximumBytes else {
            return collection.name
        }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return collection.name }
            if n == 0 { break }
            count += n
        }
        guard count <= maximumBytes, let label = String(validating: bytes.prefix(count), as: UTF8.self) else {
            return collection.name
        }
        return label
    }

    /// `text` as it looks: lowercased, without white space and format characters (a
    /// zero-width space, a bidirectional mark), to compare a label with keychains' names.
    static func lookalike(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !scalar.properties.isWhitespace && scalar.properties.generalCategory != .format {
            kept.append(scalar)
        }
        return String(kept).lowercased()
    }

    /// Sets the label of `collection`: written to a new file renamed over the old one, so a
    /// reader sees the old label or the new one; the keychain's name removes it.
    /// - Throws: InvalidArgs for a label over `maximumBytes` or that is another keychain's
    ///   name; Failed when it cannot be kept.
    static func set(_ label: String, of collection: KeychainCollections.Collection) throws(BusError) {
        let path = folder + "/" + collection.id
        if label == collection.name {
            let opened = openFolder()
            if let refused = opened.refused { throw .failed("cannot use \(folder), which keeps collection labels: \(refused)") }
            guard let dir = opened.fd else { return }
            defer { close(dir) }
            guard unlinkat(dir, collection.id, 0) == 0 || errno == ENOENT else { throw Self.failure("remove", path) }
            return
        }
        // Another keychain's name would make `CreateCollection` with it ambiguous, and one
        // that only looks like it (`Work`, `work `, `wo\u{200B}rk`) would pass for it.
        let looks = Self.lookalike(label)
        if let other = KeychainCollections().all.first(where: { Self.lookalike($0.name) == looks && $0.id != collection.id }) {
            throw .invalidArgs("\(label) is the name of the keychain \(other.path); give the collection another label")
        }
        let bytes = Array(label.utf8)
        guard bytes.count <= maximumBytes else {
            throw .invalidArgs("a collection's label is at most \(maximumBytes) bytes; this one is \(bytes.count)")
        }
        do {
            try FileSafety.makeDirectories(folder)
        } catch {
            throw .failed("cannot make \(folder) for the collection's label: \(error)")
        }
        let opened = openFolder()
        guard let dir = opened.fd else {
            throw .failed("cannot use \(folder), which keeps collection labels: \(opened.refused ?? "it is gone")")
        }
        defer { close(dir) }
        let temporaryName = "." + collection.id + ".tmp-" + ObjectPath.hex(Sodium.randomBytes(6))
        let temporary = folder + "/" + temporaryName
        let fd = openat(dir, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("create", temporary) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = Self.failure("write", temporary)
                close(fd)
                unlinkat(dir, temporaryName, 0)
                throw error
            }
            done += n
        }
        let synced = fsync(fd) == 0
        guard close(fd) == 0, synced else {
            let error = Self.failure("write", temporary)
            unlinkat(dir, temporaryName, 0)
            throw error
        }
        guard renameat(dir, temporaryName, dir, collection.id) == 0 else {
            let error = Self.failure("replace", path)
            unlinkat(dir, temporaryName, 0)
            throw error
        }
    }

    /// The error for a file operation that failed, with errno's reason.
    private static func failure(_ what: String, _ path: String) -> BusError {
        .failed("cannot \(what) \(path), which keeps a collection's label: \(String(cString: strerror(errno)))")
    }
}
