import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// `kc unlock`: hands the password to the agent (started if needed), which then serves
/// every kc command of this user without a password until the keychain locks.
struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock a keychain in the kc agent until it is locked or times out.",
        discussion: """
        Examples:
          kc unlock                                  # asks for the password; 15 min idle, 12 h at most
          kc unlock --timeout 3600                   # lock after an hour without use
          printf %s "$PASS" | kc unlock --password-stdin   # at the top of a CI job
        Then `kc find -s github.com -w` needs no password. Exit 51 on a wrong password
        (the agent's state is unchanged).
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(help: ArgumentHelp("Lock after this many seconds without use (default: the keychain's setting, 900).", valueName: "seconds"))
    var timeout: UInt64?

    @Option(help: ArgumentHelp("Lock after this many seconds whatever happens (default: the keychain's setting, 43200).", valueName: "seconds"))
    var max: UInt64?

    func validate() throws {
        try validateTimeouts(timeout, max)
    }

    func run() throws {
        let chosen = keychain.path
        try Session.checkExists(chosen)
        let path = Session.realPath(chosen)
        let password = try PasswordSource.current(keychain, path: path)
        let client = AgentClient()
        if try client.status() == nil {
            try client.launch(executable: AgentLauncher.executable, environment: AgentLauncher.allowedEnvironment)
        }
        try client.unlock(path: path, password: password, idle: timeout ?? 0, maximum: max ?? 0)
    }
}

/// `kc lock`: wipes the agent's keys for one keychain or all.
struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lock a keychain (or --all): the agent wipes its keys at once.",
        discussion: """
        Examples:
          kc lock
          kc lock --all
        After it, commands need the password again (exit 36 when they cannot ask).
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Flag(help: "Lock every keychain the agent holds.")
    var all = false

    func run() throws {
        let client = AgentClient()
        if all {
            try client.lock(path: nil)
        } else {
            try client.lock(path: Session.realPath(keychain.path))
        }
    }
}

/// `kc status`: which keychains are unlocked and for how long. Does not reset timers.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the unlocked keychains and the time until each locks.",
        discussion: """
        Examples:
          kc status
          kc status --json
        Asking does not reset any idle timer.
        """
    )

    @Flag(help: "Print JSON: [{\"path\", \"idle\", \"maximum\"}], seconds left.")
    var json = false

    func run() throws {
        let list = try AgentClient().status() ?? []
        if json {
            let objects = list.map { e in
                JSON.object([("path", JSON.string(e["path"] as? String ?? "")), ("idle", String(e["idle"] as? Int ?? 0)),
                             ("maximum", String(e["maximum"] as? Int ?? 0))])
            }
            Report.out(JSON.array(objects) + "\n")
            return
        }
        if list.isEmpty {
            Report.out("no keychain is unlocked\n")
            return
        }
        for e in list {
            let idle = e["idle"] as? Int ?? 0, maximum = e["maximum"] as? Int ?? 0
            Report.out("\(e["path"] as? String ?? ""): unlocked, locks in \(Self.duration(min(idle, maximum)))"
                       + " (idle \(Self.duration(idle)), at most \(Self.duration(maximum)))\n")
        }
    }

    static func duration(_ seconds: Int) -> String {
        if seconds >= 3600 { return "\(seconds / 3600)h\(String(format2(seconds % 3600 / 60)))m" }
        if seconds >= 60 { return "\(seconds / 60)m\(String(format2(seconds % 60)))s" }
        return "\(seconds)s"
    }

    private static func format2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}

/// `kc settings`: the keychain's stored auto-lock timeouts (needs the password).
struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set the keychain's auto-lock timeouts (as security set-keychain-settings).",
        discussion: """
        Examples:
          kc settings                      # prints the current timeouts
          kc settings -t 300               # lock after 5 minutes without use
          kc settings -t 600 --max 7200
        They apply from the next unlock. Changing them needs the keychain password.
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("Idle timeout in seconds.", valueName: "seconds"))
    var timeout: UInt64?

    @Option(help: ArgumentHelp("Absolute timeout in seconds.", valueName: "seconds"))
    var max: UInt64?

    func validate() throws {
        try validateTimeouts(timeout, max)
    }

    func run() throws {
        let opened = try Session.openWithPassword(keychain)
        let current = try opened.timeouts()
        if timeout != nil || max != nil {
            try opened.setTimeouts(idle: timeout ?? current.idle, maximum: max ?? current.maximum)
        }
        let now = try opened.timeouts()
        Report.out("idle timeout: \(now.idle) s\nmaximum: \(now.maximum) s\n")
    }
}

/// `kc agent`: the agent process itself (started by `kc unlock`; hidden).
struct Agent: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the kc agent (kc unlock starts it), or stop it.",
        shouldDisplay: false
    )

    @Flag(help: "Stop the running agent; every key is wiped.")
    var stop = false

    func run() throws {
        if stop {
            try AgentClient().stop()
            return
        }
        AgentLauncher.detach()
        let grace = Environment.get("KC_AGENT_GRACE").flatMap(Double.init) ?? 60
        try AgentServer(grace: grace).run()
    }
}

/// How `kc unlock` starts the agent, and what the agent does first.
enum AgentLauncher {
    /// This very binary (`/proc/self/exe`), so the agent always matches the client.
    static var executable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The only variables the agent inherits: never a password.
    static let allowedEnvironment = ["HOME", "PATH", "LANG", "LC_ALL", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "KC_AGENT_DIR", "KC_AGENT_GRACE"]

    /// Leaves the caller's session, folder and files behind: `$(kc unlock)` returns at once
    /// and no pipe of the caller stays open in the agent.
    static func detach() {
        _ = setsid()
        _ = chdir("/")
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            for fd: Int32 in [0, 1, 2] { dup2(null, fd) }
            if null > 2 { close(null) }
        }
        if let dir = opendir("/proc/self/fd") {
            var fds: [Int32] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if let fd = Int32(name), fd > 2 { fds.append(fd) }
            }
            let own = dirfd(dir)
            closedir(dir)
            for fd in fds where fd != own { close(fd) }
        }
    }
}

/// Timeouts given on the command line are 1 s to one year (the core's bounds).
func validateTimeouts(_ values: UInt64?...) throws {
    for value in values.compactMap({ $0 }) where value == 0 || value > Keychain.maxTimeout {
        throw ValidationError("timeouts are 1 to \(Keychain.maxTimeout) seconds (one year)")
    }
}
