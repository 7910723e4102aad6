import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where the agent's socket lives (`docs/protocol.md` §1): `$KC_AGENT_DIR`, else
/// `$XDG_RUNTIME_DIR/kc`, else `/tmp/kc-$UID`. The folder must be a real folder (not a
/// symbolic link) owned by this user with mode 0700; both sides check, since the /tmp
/// fallback can be created first by anyone.
public struct AgentPaths: Sendable {
    /// The socket folder.
    public let directory: String

    /// The folder chosen by the environment.
    public init() {
        if let dir = getenv("KC_AGENT_DIR").map({ String(cString: $0) }), dir.hasPrefix("/") {
            directory = dir
        } else if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            directory = runtime + "/kc"
        } else {
            directory = "/tmp/kc-\(geteuid())"
        }
    }

    /// A given folder (tests).
    public init(directory: String) { self.directory = directory }

    /// The socket.
    public var socket: String { directory + "/agent.sock" }
    /// The lock file held by the one running agent.
    package var lockFile: String { directory + "/agent.lock" }

    /// Checks the folder; with `create`, makes it (0700) when missing.
    /// - Throws: errSecParam when it is a symbolic link, someone else's, or open to others;
    ///   errSecNotAvailable when it does not exist (and `create` is false).
    public func check(create: Bool) throws {
        var st = stat()
        if lstat(directory, &st) != 0 {
            guard errno == ENOENT, create else {
                throw KeychainError(errSecNotAvailable, "no kc agent folder at \(directory)")
            }
            let parent = FileSafety.parentDirectory(of: directory)
            var ps = stat()
            if stat(parent, &ps) != 0 { try FileSafety.makeDirectories(parent) }
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw KeychainError(errSecIO, "cannot create \(directory): \(String(cString: strerror(errno)))", cause: .errno(errno))
            }
            guard lstat(directory, &st) == 0 else { throw KeychainError(errSecIO, "cannot read \(directory)") }
        }
        let hint = "set XDG_RUNTIME_DIR or KC_AGENT_DIR to a private folder (kc never changes this one), "
            + "or give the keychain's password (KC_PASSWORD, --password-file, --password-stdin) to work without the agent"
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw KeychainError(errSecParam, "the kc agent folder \(directory) is not a real folder (a symbolic link?)", hint: hint)
        }
        guard st.st_uid == geteuid() else {
            throw KeychainError(errSecParam, "the kc agent folder \(directory) belongs to uid \(st.st_uid), not to you", hint: hint)
        }
        guard st.st_mode & 0o777 == 0o700 else {
            throw KeychainError(errSecParam, "the kc agent folder \(directory) has mode \(String(st.st_mode & 0o777, radix: 8)), not 700", hint: hint)
        }
    }
}
