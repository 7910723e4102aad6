import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The highest generation the file agent has seen of each keychain (by keychain id), kept
/// across agent restarts and reboots in `$XDG_STATE_HOME/kc/seen-generations` (0600, one
/// line per keychain: 32 hex digits of its id, a space, the generation), so that a key slot
/// cannot open an older copy put in place of the file without anyone noticing.
///
/// An older copy opens with the slots it held (docs/security.md, "What an old password still
/// opens"); with a password the user notices (the current password fails), with a TPM2 slot
/// nobody types anything. So an unlock through a slot refuses a generation below the one
/// recorded, and an unlock with the password accepts the file (the user typed the password
/// the file has: a restore they chose) and records its generation, even a lower one.
///
/// It holds against whoever can replace the keychain file but not this account's state
/// folder (a synced or shared folder, a restore from backup, another machine's copy); a
/// process of this user can edit or remove the record as it can the file.
struct SeenGenerations {
    /// The file, or nil when there is no home to keep it in.
    let path: String
    private var seen: [[UInt8]: UInt64] = [:]

    /// Reads the record at `path` (an unreadable, unsafe or damaged one counts as empty, and
    /// is replaced at the next change).
    init(path: String = PrivateFiles.stateDirectory + "/seen-generations") {
        self.path = path
        guard let bytes = try? PrivateFiles.read(path) else { return }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let id = Hex.decode(String(fields[0])), id.count == 16, let generation = UInt64(fields[1]) else { continue }
            seen[id] = max(seen[id] ?? 0, generation)
        }
    }

    /// The highest generation recorded for the keychain `id`.
    func highest(_ id: [UInt8]) -> UInt64? { seen[id] }

    /// Records `generation` for `id` when it is higher than the one recorded, or whatever it
    /// is when `accepting` (a password unlock); writes the file when that changed anything.
    /// A file that cannot be written leaves the record as it was on disk (the agent goes on).
    mutating func record(_ id: [UInt8], _ generation: UInt64, accepting: Bool = false) {
        guard id.count == 16 else { return }
        if let known = seen[id], known == generation || (known > generation && !accepting) { return }
        seen[id] = generation
        let text = seen.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { id, generation in
            Hex.encode(id) + " " + String(generation) + "\n"
        }.joined()
        try? PrivateFiles.replace(path, bytes: Array(text.utf8))
    }
}
