#if canImport(Glibc)
import Glibc
#endif

/// The highest generation this account has seen of each keychain, kept across agent
/// restarts and reboots in `$XDG_STATE_HOME/kc/seen-generations` (`PrivateFiles`: 0600 in a
/// 0700 folder), so that a key slot cannot open an older copy put in place of the file
/// without anyone noticing (docs/security.md, "What an old password still opens").
///
/// An older copy opens with the slots it held; with a password the user notices (the
/// current password fails), with a TPM2 slot nobody types anything. So an unlock through a
/// slot refuses a generation below `floor`, and an unlock with the password accepts the file
/// (the password the file has: a restore the user chose) at its path: an acceptance, which
/// lets that path open through a slot from that generation on, until the file there passes
/// the highest generation again (at most `maximumAcceptances` per keychain, the oldest
/// dropped first). Every other path's floor is the highest generation seen of the keychain
/// anywhere: a keychain moved away and back, or a backup opened with its password, lowers
/// nothing else.
///
/// One line per keychain id: 32 hex digits of the id, the highest generation, when it was
/// last used (seconds since 1970: changed, or unlocked, at most a day apart), then for each
/// acceptance its path in hex and its generation. At most `maximumKeychains` lines: the
/// least recently used goes first. Every change is made under an exclusive lock of the folder, merged with what
/// the file holds then (two agents of one home, kc's own re-key). A record that exists but
/// cannot be used (a link, another owner, readable by others, damaged) is never replaced:
/// `floor` throws, and slot unlocks are refused until the user repairs or removes it.
///
///     try SeenGenerations.refuseOlder(id, at: path, generation)   // a slot unlock
///     try SeenGenerations.record(id, at: path, generation, accepting: unlockedWithPassword)
package enum SeenGenerations {
    /// The record's file.
    package static var file: String { PrivateFiles.stateDirectory + "/seen-generations" }
    /// The most keychains kept.
    package static let maximumKeychains = 256
    /// The most paths accepted below the highest, per keychain.
    static let maximumAcceptances = 4
    /// The longest path an acceptance keeps (longer ones are not accepted: their floor stays
    /// the highest generation, and their password still opens them).
    static let maximumPath = 1024
    /// The largest record read.
    static let maximumSize = 1 << 20

    /// What is kept of one keychain.
    struct Entry {
        var highest: UInt64
        var used: UInt64
        /// Paths a password accepted below the highest, oldest first.
        var accepted: [(path: String, generation: UInt64)]

        /// Whether the generations it holds are those of `other` (the time aside).
        func sameFloors(_ other: Entry) -> Bool {
            highest == other.highest && accepted.map(\.path) == other.accepted.map(\.path)
                && accepted.map(\.generation) == other.accepted.map(\.generation)
        }
    }

    /// The floor for the keychain `id` at `path`: the generation a password accepted there,
    /// else the highest seen of it; nil when there is none.
    /// - Throws: errSecParam or errSecDecode when the record exists but cannot be used.
    package static func floor(_ id: [UInt8], at path: String, file: String = file) throws -> UInt64? {
        guard let entry = try read(file)[id] else { return nil }
        return entry.accepted.last { $0.path == path }?.generation ?? entry.highest
    }

    /// Refuses (errSecDecode) to open the keychain `id` at `path` through a key slot when its
    /// `generation` is below the floor, or when the record cannot be used.
    package static func refuseOlder(_ id: [UInt8], at path: String, _ generation: UInt64, hint: String? = nil, file: String = file) throws {
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
                hint: hint ?? "if you restored it yourself, unlock it with its password, which accepts it")
        }
    }

    /// Records `generation` for `id` seen at `path`: the highest rises; `accepting` (an
    /// unlock with the password) makes a lower one the floor at `path`; `unlocking` marks
    /// the keychain used (at most once a day), so that one only read is not the first to go.
    /// - Throws: what `floor` throws (nothing is written then); errSecNotAvailable when
    ///   another process held the lock for 2 s; errSecIO, errSecReadOnly, errSecDiskFull.
    package static func record(
        _ id: [UInt8], at path: String, _ generation: UInt64, accepting: Bool = false, unlocking: Bool = false, file: String = file
    ) throws {
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
        let before = entries[id]
        var entry = before ?? Entry(highest: generation, used: 0, accepted: [])
        let own = entry.accepted.lastIndex { $0.path == path }
        if generation >= entry.highest {
            entry.highest = generation
            if let own { entry.accepted.remove(at: own) }   // the floor there is the highest again
        } else if accepting || own.map({ generation > entry.accepted[$0].generation }) == true {
            if let own { entry.accepted.remove(at: own) }
            if path.utf8.count <= maximumPath { entry.accepted.append((path, generation)) }
            entry.accepted = Array(entry.accepted.suffix(maximumAcceptances))
        }
        let now = UInt64(max(0, time(nil)))
        if let before, before.sameFloors(entry), !unlocking || now < before.used + 86_400 { return }
        entry.used = now
        entries[id] = entry
        if entries.count > maximumKeychains {
            // The least recently changed go, never the one just recorded.
            let others = entries.filter { $0.key != id }.sorted { ($0.value.used, Hex.encode($0.key)) < ($1.value.used, Hex.encode($1.key)) }
            for (old, _) in others.prefix(entries.count - maximumKeychains) {
                entries[old] = nil
            }
        }
        let text = entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { id, entry in
            var line = Hex.encode(id) + " " + String(entry.highest) + " " + String(entry.used)
            for accepted in entry.accepted { line += " " + Hex.encode(Array(accepted.path.utf8)) + " " + String(accepted.generation) }
            return line + "\n"
        }.joined()
        try PrivateFiles.replace(file, bytes: Array(text.utf8))
    }

    /// The records in `file`; empty when there is none.
    /// - Throws: errSecParam for a file that is a link, another user's or open to others;
    ///   errSecDecode for one that is not a record.
    private static func read(_ file: String) throws -> [[UInt8]: Entry] {
        guard let bytes = try PrivateFiles.read(file, limit: maximumSize) else { return [:] }
        var out: [[UInt8]: Entry] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ").map(String.init)
            let damaged = KeychainError(errSecDecode, "\(file) is not a record of generations seen (a damaged line)")
            guard f.count >= 3, f.count % 2 == 1, f.count <= 3 + 2 * maximumAcceptances, let id = Hex.decode(f[0]), id.count == 16,
                let highest = UInt64(f[1]), let used = UInt64(f[2])
            else { throw damaged }
            var entry = Entry(highest: highest, used: used, accepted: [])
            for i in stride(from: 3, to: f.count, by: 2) {
                guard let pathBytes = Hex.decode(f[i]), let path = String(validating: pathBytes, as: UTF8.self), let generation = UInt64(f[i + 1]),
                    generation < highest
                else { throw damaged }
                entry.accepted.append((path, generation))
            }
            out[id] = entry
        }
        return out
    }
}
