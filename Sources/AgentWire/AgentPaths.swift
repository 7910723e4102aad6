import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where the agent's socket lives (`docs/protocol.md` §1): `$KC_AGENT_DIR`, else
/// `$XDG_RUNTIME_DIR/kc`, else `/tmp/kc-$UID`. The folder must be a real folder (not a
/// symbolic link) owned by this user with mode 0700; both sides check, since the /tmp
/// fallback can be created first by anyone.
///
/// Two agents share the folder: the file agent (`kc agent`: `agent.sock`, `agent.lock`) and
/// the team agent (`kc-team agent`: `team-agent.sock`, `team-agent.lock`), which holds team
/// keychains (`-k team:NAME`).
public struct AgentPaths: Sendable {
    /// The socket folder.
    public let directory: String
    /// The agent's name in the folder: the socket is `NAME.sock`, the lock `NAME.lock`.
    public let name: String

    /// The file agent's name (`kc agent`).
    public static let fileAgentName = "agent"
    /// The team agent's name (`kc-team agent`).
    public static let teamAgentName = "team-agent"

    /// The file agent in the folder chosen by the environment.
    public init() {
        self.init(name: Self.fileAgentName)
    }

    /// The agent `name` in the folder chosen by the environment.
    public init(name: String) {
        self.name = name
        if let dir = getenv("KC_AGENT_DIR").map({ String(cString: $0) }), dir.hasPrefix("/") {
            directory = dir
        } else if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            directory = runtime + "/kc"
        } else {
            directory = "/tmp/kc-\(geteuid())"
        }
    }

    /// The agent `name` (the file agent by default) in a given folder (tests).
    public init(directory: String, name: String = AgentPaths.fileAgentName) {
        self.directory = directory
        self.name = name
    }

    /// The team agent in the folder chosen by the environment.
    public static var team: AgentPaths { AgentPaths(name: teamAgentName) }

    /// The team agent in this agent's folder.
    public var teamAgent: AgentPaths { AgentPaths(directory: directory, name: Self.teamAgentName) }

    /// The socket.
    public var socket: String { directory + "/" + name + ".sock" }
    /// The lock file held by the one running agent of this name.
    package var lockFile: String { directory + "/" + name + ".lock" }

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
        let hint =
            "set XDG_RUNTIME_DIR or KC_AGENT_DIR to a private folder (kc never changes this one), "
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
