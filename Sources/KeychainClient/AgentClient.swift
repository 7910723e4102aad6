import KeychainCore
import POSIXSupport
import AgentWire
#if canImport(Glibc)
import Glibc
#endif

/// The client side of the agent protocol, used by every `kc` command
/// (`docs/protocol.md`). It checks the socket folder and the agent's uid before it sends
/// a single byte.
public struct AgentClient: Sendable {
    /// What an operation through the agent gave.
    public enum Outcome {
        /// The agent performed it; its reply.
        case result(KeychainReply)
        /// The agent runs but does not hold that keychain unlocked.
        case notHeld
        /// No agent runs.
        case noAgent
    }

    /// What to do when the agent folder is unsafe (another account's, a link, open to others).
    public enum UnsafeFolder: Sendable {
        /// Fail with errSecParam (nothing can be sent there).
        case refuse
        /// Act as if no agent ran (the caller has a password and works in-process); `warn`
        /// is given the error first.
        case ignore(warn: @Sendable (KeychainError) -> Void)
    }

    public let paths: AgentPaths
    /// How long to wait for an answer (an unlock runs Argon2; a scan may take seconds).
    public var timeout: Double = 120
    /// See `UnsafeFolder`; `kc unlock` always refuses.
    public var unsafeFolder: UnsafeFolder = .refuse
    /// Whether this process is kc itself, so that the agent must be the same program
    /// before a request carrying a secret goes to it. A program that links the Security
    /// module is another program than the agent: for it only uids and tracing are checked.
    public var isKC = false
    /// For a front end that is not kc but is installed with it (the Secret Service
    /// provider): the kc executable the agent must be. Requests that carry a secret then
    /// compare the agent's program with it, as kc compares it with itself.
    public var agentProgram: String?

    public init(paths: AgentPaths = AgentPaths()) { self.paths = paths }

    /// The team agent's program, installed beside kc (`make install`).
    public static let teamProgramName = "kc-team"

    /// The client of the team agent (`kc-team agent`, `team-agent.sock` in the same folder),
    /// which alone holds team keychains. It is another program than kc: when this client
    /// compares the agent with a program (kc itself, or a front end installed beside kc),
    /// the team agent is compared with `kc-team` installed beside this one. An unsafe
    /// folder is always refused: a team keychain is never opened in this process instead.
    public var teamAgent: AgentClient {
        var team = AgentClient(paths: paths.teamAgent)
        team.timeout = timeout
        if isKC || agentProgram != nil {
            team.agentProgram = Self.besideOwnExecutable(Self.teamProgramName)
        }
        return team
    }

    /// The client of the agent that holds `address`, from the file agent's client: this
    /// one for a keychain file, `teamAgent` for a team keychain.
    public func holding(_ address: KeychainAddress) -> AgentClient {
        switch address {
        case .file: self
        case .team: teamAgent
        }
    }

    /// This very program (`/proc/self/exe`), which `unlock` starts as the agent, so the
    /// agent always matches its client.
    public static var ownExecutable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments.first ?? "kc" }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The program `name` installed in the same folder as this one (`kc` beside the Secret
    /// Service provider, the provider beside `kc`): `make install` puts them together.
    public static func besideOwnExecutable(_ name: String) -> String {
        let folder = ownExecutable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (folder.isEmpty ? "." : folder) + "/" + name
    }

    /// The only variables the agent inherits: never a password.
    public static let agentEnvironment = [
        "HOME", "PATH", "LANG", "LC_ALL", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "KC_AGENT_DIR", "KC_AGENT_GRACE"
    ]

    /// The variables the team agent inherits: the file agent's, and where it keeps its
    /// checkpoints (`$XDG_STATE_HOME/kc`), the readers' staleness limit, the round-trip
    /// deadline (`KC_TEAM_ROUND_TRIP_TIMEOUT`), and libpq's files
    /// and TLS settings (`.pgpass`, the CA). Never a password (not even `PGPASSWORD`) or a
    /// runner token.
    public static let teamAgentEnvironment =
        agentEnvironment + [
            "KC_TEAM_MAX_STALENESS", "KC_TEAM_ROUND_TRIP_TIMEOUT",
            "PGPASSFILE", "PGSERVICEFILE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "PGSSLMODE"
        ]

    /// Connects to the running agent, or nil when none runs.
    /// - Throws: errSecParam when the folder is unsafe or the agent is another user's.
    func connect() throws -> UnixSocket? {
        var st = stat()
        if lstat(paths.directory, &st) != 0 { return nil }
        do {
            try paths.check(create: false)
        } catch let error as KeychainError where error.status == errSecParam {
            guard case .ignore(let warn) = unsafeFolder else { throw error }
            warn(error)
            return nil
        }
        guard let socket = try UnixSocket.connect(to: paths.socket) else { return nil }
        let uid = try socket.peerUID()
        guard uid == geteuid() else {
            throw KeychainError(
                errSecParam, "the process listening at \(paths.socket) runs as uid \(uid), not as you; nothing was sent",
                hint: "someone may be impersonating the kc agent; set XDG_RUNTIME_DIR or KC_AGENT_DIR to a private folder")
        }
        return socket
    }

    /// Sends one request; nil when no agent runs. An error reply is thrown.
    /// - Parameter carriesSecret: check the peer as far as the kernel shows it first
    ///   (`checkVisible`): the request holds an item's secret.
    private func roundTrip(_ type: AgentProtocol.Request, _ body: [UInt8], carriesSecret: Bool = false) throws -> AgentReply? {
        guard let socket = try connect() else { return nil }
        if carriesSecret {
            try Self.checkVisible(socket, sameProgram: isKC || agentProgram != nil, program: isKC ? "/proc/self/exe" : agentProgram)
        }
        return try exchange(on: socket, type, body)
    }

    /// Refuses a peer that `AgentPeer` shows is not the real agent (another program, traced,
    /// other uids); accepts one whose program the kernel hides. Cheaper than and short of
    /// `trustedConnection`, which would refuse the real agent a normal user did not start:
    /// docs/security.md says what this leaves to an impostor.
    private static func checkVisible(_ socket: UnixSocket, sameProgram: Bool, program: String?) throws {
        do {
            try AgentPeer.verify(socket, launched: nil, sameProgram: sameProgram, program: program ?? "/proc/self/exe")
        } catch AgentPeer.Verdict.refused(let why) {
            throw refusal(why, sent: "the secret was not sent")
        } catch AgentPeer.Verdict.unverifiable {
            return
        }
    }

    /// One request and its answer on a connected socket; an error reply is thrown.
    private func exchange(on socket: UnixSocket, _ type: AgentProtocol.Request, _ body: [UInt8]) throws -> AgentReply {
        var frame = AgentProtocol.frame(type: type.rawValue, body: body)
        defer { Sodium.wipe(&frame) }
        let deadline = Deadline.after(seconds: timeout)
        try socket.writeAll(frame, until: deadline)
        var payload = try socket.readFrame(until: deadline)
        defer { Sodium.wipe(&payload) }
        let reply = try AgentReply.decode(payload)
        if case .error(let error) = reply { throw error }
        return reply
    }

    /// Performs a request on a keychain the agent holds.
    /// - Throws: errSecDataTooLarge when the request is larger than one agent message.
    public func perform(path: String, _ request: KeychainRequest) throws -> Outcome {
        guard let outcome = try performIfFits(path: path, request) else {
            throw KeychainError(errSecDataTooLarge, "the request is larger than the agent accepts (\(AgentProtocol.maxFrame >> 20) MiB)")
        }
        return outcome
    }

    /// As `perform`, but nil when the request is larger than one agent message (a big
    /// import): the caller then does the work itself. No proof of user presence is ever
    /// sent: a request that needs one is performed by the caller in its own process.
    /// - Throws: `UserPresenceRequired`, naming the items, when the request would release
    ///   secrets protected by user presence (or when an impostor says so: nothing is sent
    ///   in return, so saying so gains it nothing).
    public func performIfFits(path: String, _ request: KeychainRequest) throws -> Outcome? {
        var w = try AgentRequest.operationBody(path: path, request)
        defer { w.wipe() }
        guard w.bytes.count + 3 <= AgentProtocol.maxFrame else { return nil }
        switch try roundTrip(.operation, w.bytes, carriesSecret: request.carriesSecret) {
        case nil: return .noAgent
        case .notHeld?: return .notHeld
        case .ok(let value)?: return .result(try KeychainReply(wire: value, for: request))
        case .error(let error)?: throw error
        case .presenceRequired(let items)?: throw UserPresenceRequired(items: items)
        }
    }

    /// Hands the agent a keychain's password; it derives the keys and holds them. Starts
    /// the agent (`executable agent`, see `launch`) when none runs.
    ///
    /// The password is sent only to a peer established as the real kc agent (`AgentPeer`).
    /// One whose executable the kernel hides (any non-dumpable process, when this one is
    /// not privileged) is accepted only if this process started it; an agent that holds no
    /// keychain is then stopped and started again, one that holds some is refused.
    /// - Parameters: `idle` / `maximum` in seconds, 0 for the keychain's own settings;
    ///   `replacingAnUncheckable`: false never stops an agent this process cannot check,
    ///   even an empty one (it may keep locked keychains' after-first-unlock items), and
    ///   refuses instead.
    /// - Throws: errSecCSReqFailed (nothing sent) when the peer is not established as kc.
    public func unlock(
        path: String, password: borrowing SecureBytes, idle: UInt64, maximum: UInt64,
        executable: String = AgentClient.ownExecutable, environment: [String] = AgentClient.agentEnvironment,
        replacingAnUncheckable: Bool = true
    ) throws {
        let socket = try trustedConnection(executable: executable, environment: environment, replacing: replacingAnUncheckable)
        var w = AgentRequest.unlockBody(path: path, password: password, idle: idle, maximum: maximum)
        defer { w.wipe() }
        _ = try exchange(on: socket, .unlock, w.bytes)
    }

    /// Unlocks `path` in the agent with the secret of one of its key slots (a recovery key),
    /// sent only to an agent established as the real one, as a password is.
    public func unlock(path: String, slot kind: KeySlotKind, secret: borrowing SecureBytes, idle: UInt64, maximum: UInt64) throws {
        let socket = try trustedConnection(executable: Self.ownExecutable, environment: Self.agentEnvironment)
        var w = AgentRequest.unlockWithSlotBody(path: path, kind: kind, secret: secret, idle: idle, maximum: maximum)
        defer { w.wipe() }
        _ = try exchange(on: socket, .unlockWithSlot, w.bytes)
    }

    /// Unlocks, or creates and unlocks, a keychain whose password a held keychain keeps
    /// (`KeptPassword`). No password crosses the socket, so the agent need not be one this
    /// process can establish (as a normal user, only one it started).
    /// - Throws: errSecInteractionNotAllowed when the agent does not hold the keeper (or no
    ///   agent runs); errSecItemNotFound when no password is kept; the open's errors.
    package func unlock(_ kept: KeptPassword) throws {
        guard let reply = try roundTrip(.unlockWithKept, AgentRequest.unlockWithKeptBody(kept)) else {
            throw KeychainError(errSecInteractionNotAllowed, "no kc agent runs, so \(kept.holder) is locked")
        }
        if case .notHeld = reply {
            throw KeychainError(errSecInteractionNotAllowed, "\(kept.holder) is locked", hint: "unlock it with `kc unlock`")
        }
    }

    /// A connection to an agent established as the real one, started first if none runs.
    private func trustedConnection(executable: String, environment: [String], replacing: Bool = true) throws -> UnixSocket {
        if let socket = try connect() {
            do {
                try AgentPeer.verify(socket, launched: nil, program: Self.program(executable))
                return socket
            } catch AgentPeer.Verdict.refused(let why) {
                throw Self.refusal(why)
            } catch AgentPeer.Verdict.unverifiable(let pid) {
                // Possibly the real agent, possibly not: a password goes only to one started here.
                let held = try status() ?? []
                guard held.isEmpty, replacing else {
                    throw KeychainError(
                        errSecCSReqFailed,
                        "kc cannot establish that the agent (pid \(pid)) is the real kc agent: the kernel hides the program of a non-dumpable process, and this kc did not start it; the password was not sent",
                        hint:
                            "kc can check only an agent it started itself, so as a normal user you hold one keychain unlocked at a time: kc lock --all, then unlock this one (docs/security.md)"
                    )
                }
                try stop()
                // Give the stopped agent a moment to release its lock and socket.
                let start = Deadline.now
                while Deadline.now.nanoseconds - start.nanoseconds < 2_000_000_000, try connect() != nil { usleep(10_000) }
            }
        }
        let pid = try launch(executable: executable, environment: environment)
        return try connectToLaunched(pid, program: Self.program(executable))
    }

    /// The file to run and compare agents with: this very program for kc itself (whatever
    /// has happened to its path since it started), else the kc executable given.
    static func program(_ executable: String) -> String {
        executable == ownExecutable ? "/proc/self/exe" : executable
    }

    /// Waits up to 5 s for the agent `pid` (spawned by `launch`) to answer at the socket.
    private func connectToLaunched(_ pid: pid_t, program: String) throws -> UnixSocket {
        let start = Deadline.now
        var reaped = false
        while Deadline.now.nanoseconds - start.nanoseconds < 5_000_000_000 {
            if !reaped {
                var status: Int32 = 0
                reaped = waitpid(pid, &status, WNOHANG) == pid
            }
            if let socket = try connect() {
                do {
                    let peer = try socket.peerCredentials().pid
                    if peer == pid && !reaped {
                        try AgentPeer.verify(socket, launched: pid, program: program)
                        return socket
                    }
                    // Another process answers. While ours runs, it may not have replaced the
                    // socket yet; once ours has exited (another agent held the lock), that
                    // other one is the agent and must pass on its own.
                    if reaped {
                        try AgentPeer.verify(socket, launched: nil, program: program)
                        return socket
                    }
                } catch AgentPeer.Verdict.refused(let why) {
                    throw Self.refusal(why)
                } catch AgentPeer.Verdict.unverifiable(let other) {
                    throw KeychainError(
                        errSecCSReqFailed,
                        "another process (pid \(other)) holds the kc agent's place and kc cannot establish that it is the real agent; the password was not sent",
                        hint: "stop it (kc agent --stop, or kill \(other)) and unlock again")
                }
            }
            usleep(10_000)
        }
        throw KeychainError(errSecNotAvailable, "the kc agent did not start within 5 s")
    }

    private static func refusal(_ why: String, sent: String = "the password was not sent") -> KeychainError {
        KeychainError(
            errSecCSReqFailed, "the process at the kc agent's socket is not the real kc agent: \(why); \(sent)",
            hint: "another program of yours may be posing as the agent: stop it (kc agent --stop, or kill it) and try again; see docs/security.md")
    }

    /// Locks one keychain, or every one. Returns false when no agent runs.
    @discardableResult
    public func lock(path: String?) throws -> Bool {
        try roundTrip(.lock, AgentRequest.lockBody(path: path)) != nil
    }

    /// The unlocked keychains: path, seconds until idle lock and absolute lock. Nil when no
    /// agent runs. Does not reset any idle timer.
    public func status() throws -> [HeldKeychain]? {
        guard case .ok(let value)? = try roundTrip(.status, []) else { return nil }
        return try HeldKeychain.list(value)
    }

    /// `status`, from an agent that passes the checks the kernel lets this process make
    /// (uids, not traced, and for kc the same program when it is visible), as requests that
    /// carry a secret get: `kc unlock` believes "already unlocked" only from such a peer.
    /// - Throws: errSecCSReqFailed when the peer is refused.
    public func checkedStatus() throws -> [HeldKeychain]? {
        guard case .ok(let value)? = try roundTrip(.status, [], carriesSecret: true) else { return nil }
        return try HeldKeychain.list(value)
    }

    /// Stops the agent (every key wiped). Returns false when none ran.
    @discardableResult
    public func stop() throws -> Bool {
        try roundTrip(.stop, []) != nil
    }

    /// Starts `executable agent` detached: a new session, standard streams on /dev/null,
    /// an allow-listed environment (never a password). The program run is this process's
    /// own (`/proc/self/exe`, whatever now lies at `executable`, which is only argv[0]):
    /// the peer check relies on it. Returns the agent's pid, not yet reaped.
    func launch(executable: String, environment allowed: [String]) throws -> pid_t {
        try paths.check(create: true)
        var environment: [String] = []
        for name in allowed {
            if let v = getenv(name) { environment.append("\(name)=\(String(cString: v))") }
        }
        // Standard streams on /dev/null, nothing else of the caller's: `DetachedChild`.
        let started = DetachedChild.spawn(Self.program(executable), arguments: [executable, "agent"], environment: environment)
        guard case .success(let pid) = started else {
            let code = if case .failure(let failure) = started { failure.code } else { EIO }
            throw KeychainError(errSecNotAvailable, "cannot start the kc agent: \(String(cString: strerror(code)))", cause: .errno(code))
        }
        // The agent runs on in its own session; `connectToLaunched` waits for it (and reaps
        // it if it exits at once because another agent holds the lock).
        return pid
    }
}
