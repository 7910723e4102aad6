#if canImport(Glibc)
import Glibc
#endif

/// kc's configuration file, `$XDG_CONFIG_HOME/kc/config` (else `~/.config/kc/config`):
/// the user's defaults for what flags and `KC_*` variables also choose (docs/config.md).
///
/// One `KEY = VALUE` a line; `#` starts a comment (on its own line, or after a space or tab
/// at the end of one); blank lines are ignored. Every key is optional; an unknown key, a
/// value that does not parse, a key given twice or a line without `=` is an error naming
/// the file and the line (errSecParam, exit 206), never a guess.
///
///     # ~/.config/kc/config
///     keychain = work
///     idle-timeout = 600      # ten minutes
///     unlock-on-prompt = no
///
/// The file is read as sshd checks a user's files: it must be a regular file owned by the
/// user (or root) that no other account can write, reached through folders (and a link, if
/// any) no other account owns or can write (`checkPlace`; docs/security.md, "The
/// configuration file"),
/// since it chooses where secrets are written and how long keys stay unlocked. A missing
/// file is no error: it costs one failed `openat` per name walked.
///
/// It lives here, below every program, so that kc, kc-team and kc-secret-service read the
/// same file the same way (`ConfigFile.load()`); only kc applies it so far.
public struct ConfigFile: Sendable {
    /// One value of the file and the line it was on (1 for the first).
    public struct Entry<Value: Sendable>: Sendable {
        /// The value, parsed and checked.
        public let value: Value
        /// Its line in the file.
        public let line: Int
    }

    /// Where the file was looked for; nil when neither `XDG_CONFIG_HOME` nor `HOME` says.
    public let path: String?
    /// Whether the file was there (and read).
    public let exists: Bool

    /// `keychain`: the keychain when neither `-k` nor `KC_KEYCHAIN` chooses one, as `-k`
    /// takes it: a NAME, an absolute path (`~/` is the home folder), or `team:NAME`.
    public internal(set) var keychain: Entry<String>?
    /// `idle-timeout`: seconds without use before the agent locks a keychain (1 s to a year).
    public internal(set) var idleTimeout: Entry<UInt64>?
    /// `max-timeout`: seconds after its unlock before the agent locks a keychain whatever
    /// happens (1 s to a year).
    public internal(set) var maxTimeout: Entry<UInt64>?
    /// `unlock-on-prompt`: whether a password typed at kc's prompt also unlocks the
    /// keychain in the agent (`yes`/`no`, as `KC_UNLOCK_ON_PROMPT`).
    public internal(set) var unlockOnPrompt: Entry<Bool>?
    /// `clip-seconds`: how long `--clip` alone leaves a secret on the clipboard (1 to 86400).
    public internal(set) var clipSeconds: Entry<Int>?
    /// `kdf`: the key-derivation profile of new keychains.
    public internal(set) var kdf: Entry<KDFProfile>?
    /// `team`: the team keychain (its NAME, without `team:`) to use when a team command is
    /// given none and more than one is joined. Read and checked here; which command applies
    /// it is the caller's.
    public internal(set) var team: Entry<String>?

    /// The keys, in the order docs/config.md and `kc config` list them.
    public static let keys = ["keychain", "idle-timeout", "max-timeout", "unlock-on-prompt", "clip-seconds", "kdf", "team"]

    /// The longest `clip-seconds` (and `--clip`): a day.
    public static let maxClipSeconds = 86_400

    /// The largest file read: a configuration file is a few lines.
    public static let maxSize = 64 * 1024

    /// A file with no values, as if absent.
    public init(path: String?, exists: Bool = false) {
        self.path = path
        self.exists = exists
    }

    /// The file's path: `$XDG_CONFIG_HOME/kc/config` when that variable is an absolute path,
    /// else `$HOME/.config/kc/config` (the home folder from `$HOME`, as for keychains); nil
    /// when neither is set to an absolute path.
    public static var defaultPath: String? {
        if let xdg = KeychainLocation.environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/kc/config" }
        // A HOME that is not absolute is ignored, as such an XDG_CONFIG_HOME is: the file
        // would change with the working folder.
        guard let home = KeychainLocation.environment("HOME"), home.hasPrefix("/") else { return nil }
        return home + "/.config/kc/config"
    }

    /// Reads the file at `defaultPath`; a file with no values when there is none.
    /// - Throws: as `load(path:)`.
    public static func load() throws -> ConfigFile {
        guard let path = defaultPath else { return ConfigFile(path: nil) }
        return try load(path: path)
    }

    /// Reads and checks the file at `path` (`checkPlace`, which opens it, then one `fstat` and
    /// a `read` or two).
    /// - Returns: its values; none when the file does not exist.
    /// - Throws: errSecParam (exit 206) for a file another account owns or can write, one
    ///   in a folder another account owns or can write, a link another account owns, one
    ///   that is not a regular file or is larger than `maxSize`, and for any malformed line
    ///   (the message starts `PATH:LINE:`); errSecIO when it exists but cannot be read.
    public static func load(path: String) throws -> ConfigFile {
        // The links and folders on the way, then the file opened in the last folder checked.
        guard let fd = try checkPlace(path) else { return ConfigFile(path: path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            throw KeychainError(errSecIO, "cannot read the configuration file \(path): \(String(cString: strerror(e)))", cause: .errno(e))
        }
        try checkOwnership(st, path: path)
        guard st.st_size <= maxSize else { throw tooLarge(path) }
        // One read of the size fstat gave, and one more that finds the end.
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress.map { $0 + count }, $0.count - count) }
            if n == 0 { break }
            if n < 0 {
                let e = errno
                if e == EINTR { continue }
                throw KeychainError(
                    errSecIO, "cannot read the configuration file \(path): \(String(cString: strerror(e)))", cause: .errno(e))
            }
            count += n
        }
        if count == bytes.count {
            // Longer than fstat said: being written now.
            throw KeychainError(
                errSecIO, "the configuration file \(path) changed while kc read it", hint: "run the command again once it is saved")
        }
        bytes.removeLast(bytes.count - count)
        return try parse(bytes, path: path)
    }

    /// The error for a file larger than `maxSize`.
    static func tooLarge(_ path: String) -> KeychainError {
        KeychainError(
            errSecParam, "the configuration file \(path) is larger than \(maxSize / 1024) KiB",
            hint: "it holds a few KEY = VALUE lines; see `kc config`")
    }

    /// A regular file, owned by this user (or root, as ssh allows), that neither its group
    /// nor others can write: anyone who could write it would choose where secrets are
    /// stored and how long keys stay unlocked.
    static func checkOwnership(_ st: stat, path: String) throws {
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainError(errSecParam, "the configuration file \(path) is not a regular file", hint: "remove it, or make it a file")
        }
        guard st.st_uid == geteuid() || st.st_uid == 0 else {
            throw KeychainError(
                errSecParam, "the configuration file \(path) belongs to uid \(st.st_uid), not to you; not read",
                hint: "another account could choose your keychain and timeouts; remove it, or copy what you trust into a file of your own")
        }
        guard st.st_mode & 0o022 == 0 else {
            throw KeychainError(
                errSecParam,
                "the configuration file \(path) can be written by other users (mode \(String(st.st_mode & 0o777, radix: 8))); not read",
                hint: "run `chmod go-w \(path)` if you trust its contents")
        }
    }
}
