#if canImport(Glibc)
import Glibc
#endif

/// The highest generation this account has seen of each keychain file, kept across agent
/// restarts and reboots in `$XDG_STATE_HOME/kc/seen-generations` (`PrivateFiles`: 0600 in a
/// 0700 folder; one line per keychain id and path: 32 hex digits of the id, the generation,
/// the path in hex), so that a key slot cannot open an older copy put in place of the file
/// without anyone noticing (docs/security.md, "What an old password still opens").
///
/// An older copy opens with the slots it held; with a password the user notices (the
/// current password fails), with a TPM2 slot nobody types anything. So an unlock through a
/// slot refuses a generation below `floor`, and an unlock with the password accepts the file
/// (the password the file has: a restore the user chose) and records its generation at its
/// path, even a lower one. The floor of a path is its own record, else the highest of the
/// keychain id at any path: a backup opened with its password lowers its own record only.
///
/// Every change is made under an exclusive lock of the folder, merged with what the file
/// holds then (two agents of one home, kc's own re-key). A record that exists but cannot be
/// used (a link, another owner, readable by others, damaged) is never replaced: `floor`
/// throws, and slot unlocks are refused until the user repairs or removes it.
///
///     if let floor = try SeenGenerations.floor(id, at: path), generation < floor { refuse }
///     try SeenGenerations.record(id, at: path, generation, accepting: unlockedWithPassword)
package enum SeenGenerations {
    /// The record's file.
    package static var file: String { PrivateFiles.stateDirectory + "/seen-generations" }

    /// The floor for the keychain `id` at `path`: the generation recorded for that path,
    /// else the highest recorded for `id` anywhere; nil when there is none.
    /// - Throws: errSecParam or errSecDecode when the record exists but cannot be used.
    package static func floor(_ id: [UInt8], at path: String, file: String = file) throws -> UInt64? {
        let entries = try read(file)
        if let own = entries[Key(id: id, path: path)] { return own }
        return entries.filter { $0.key.id == id }.map(\.value).max()
    }

    /// Refuses (errSecDecode) to open the keychain `id` at `path` through a key slot when its
    /// `generation` is below the floor, or when the record cannot be used.
    package static func refuseOlder(_ id: [UInt8], at path: String, _ generation: UInt64, file: String = file) throws {
        let known: UInt64?
        do {
            known = try floor(id, at: path, file: file)
        } catch let error as KeychainError {
            throw KeychainError(
                errSecDecode, "the record of the generations this account has seen cannot be used (\(error.message)): a key slot opens nothing until it can",
                hint: "unlock with the password; repair \(file) (0600, yours) or remove it")
        }
        if let known, generation < known {
            throw KeychainError(
                errSecDecode,
                "\(path) is older than the one this account last saw (generation \(generation), not \(known)): an older copy was put in its place, and a key slot does not open it",
                hint: "if you restored it yourself, unlock it with its password, which accepts it")
        }
    }

    /// Records `generation` for `id` at `path`: raised when higher than what is recorded, set
    /// whatever it is when `accepting` (an unlock with the password).
    /// - Throws: what `floor` throws (nothing is written then); errSecNotAvailable when
    ///   another process held the lock for 2 s; errSecIO, errSecReadOnly, errSecDiskFull.
    package static func record(_ id: [UInt8], at path: String, _ generation: UInt64, accepting: Bool = false, file: String = file) throws {
        guard id.count == 16 else { return }
        let folder = FileSafety.parentDirectory(of: file)
        try FileSafety.makeDirectories(folder)
        let lock = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw KeychainError(errSecIO, "cannot open \(folder) to lock it: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        var waited = 0
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, waited < 400 else {
                throw KeychainError(errSecNotAvailable, "another process kept \(folder) locked; the generation seen was not recorded")
            }
            usleep(5_000)
            waited += 1
        }
        var entries = try read(file)
        let key = Key(id: id, path: path)
        if let known = entries[key], known == generation || (known > generation && !accepting) { return }
        entries[key] = generation
        let text = entries.sorted { ($0.key.hexID, $0.key.path) < ($1.key.hexID, $1.key.path) }.map { key, generation in
            key.hexID + " " + String(generation) + " " + Hex.encode(Array(key.path.utf8)) + "\n"
        }.joined()
        try PrivateFiles.replace(file, bytes: Array(text.utf8))
    }

    /// A keychain id at a path.
    private struct Key: Hashable {
        let id: [UInt8]
        let path: String
        var hexID: String { Hex.encode(id) }
    }

    /// The records in `file`; empty when there is none.
    /// - Throws: errSecParam for a file that is a link, another user's or open to others;
    ///   errSecDecode for one that is not a record.
    private static func read(_ file: String) throws -> [Key: UInt64] {
        guard let bytes = try PrivateFiles.read(file) else { return [:] }
        var out: [Key: UInt64] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let id = Hex.decode(String(fields[0])), id.count == 16, let generation = UInt64(fields[1]),
                let pathBytes = Hex.decode(String(fields[2])), let path = String(validating: pathBytes, as: UTF8.self)
            else {
                throw KeychainError(errSecDecode, "\(file) is not a record of generations seen (a damaged line)")
            }
            let key = Key(id: id, path: path)
            out[key] = max(out[key] ?? 0, generation)
        }
        return out
    }
}
