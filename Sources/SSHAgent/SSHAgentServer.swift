import KeychainCore
import POSIXSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `kc ssh-agent`: serves the SSH agent protocol (draft-miller-ssh-agent, with OpenSSH's
/// extensions) on `ssh-agent.sock` in kc's agent folder. Keys: those `ssh-add` gave it
/// (`HeldKeys`, this process's memory only), then every `SSHIdentitySource` (kc key items
/// of unlocked keychains), asked again on each request so a keychain that locks stops
/// serving at once.
///
/// One thread per client (at most `maximumClients`), each with deadlines: a message must
/// start within `idleSeconds` of the last answer and be whole `messageSeconds` after it
/// starts, so a silent client holds one thread for a bounded time and no one else waits on
/// it. Peers of another uid are closed without a byte (SO_PEERCRED, as the kc agent).
public final class SSHAgentServer: Sendable {
    /// The socket's file name in the agent folder.
    public static let socketName = "ssh-agent.sock"
    /// The lock file held by the one running SSH agent of the folder.
    public static let lockName = "ssh-agent.lock"
    /// Most clients served at once; more are closed at once.
    static let maximumClients = 64
    /// How long a connection may stay silent between messages.
    let idleSeconds: Double
    /// How long one message may take to arrive once its length came.
    static let messageSeconds = 10.0

    /// The agent folder.
    public let directory: String
    /// Where the agent finds keychain keys, asked on every request.
    let sources: @Sendable () -> [any SSHIdentitySource]
    /// How `-c` and user-presence keys are confirmed.
    let confirmation: SignatureConfirmation
    let held = HeldKeys()
    let lockState = AgentLockState()
    private let clients = Atomic<Int>(0)

    /// Set by SIGTERM, SIGINT and SIGHUP.
    nonisolated(unsafe) static var signalled: Int32 = 0

    /// An agent for `directory` (AgentPaths' folder).
    public init(
        directory: String, sources: @escaping @Sendable () -> [any SSHIdentitySource],
        confirmation: SignatureConfirmation, idleSeconds: Double = 60
    ) {
        self.directory = directory
        self.sources = sources
        self.confirmation = confirmation
        self.idleSeconds = idleSeconds
    }

    /// The socket's path.
    public var socketPath: String { directory + "/" + Self.socketName }

    /// Serves until a signal, or until its socket or folder goes. Returns at once (false)
    /// when another SSH agent holds the folder's lock.
    public func run(ready: () -> Void = {}) throws -> Bool {
        ProcessHardening.disableCoreDumps()
        let lockPath = directory + "/" + Self.lockName
        let lockFD = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw KeychainError(errSecIO, "cannot open \(lockPath)") }
        defer { close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { return false }
        ftruncate(lockFD, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
        unlink(socketPath)
        let listener = try UnixSocket.listen(at: socketPath)
        let folder = Self.identity(of: directory)
        defer {
            if Self.identity(of: directory) == folder { unlink(socketPath) }
            held.removeAll()
        }
        for s in [SIGTERM, SIGINT, SIGHUP] { signal(s, sshAgentSignalHandler) }
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        signal(SIGPIPE, SIG_IGN)
        ready()
        serve(listener) {
            // A socket removed or its folder replaced leaves no client a way in: stop.
            Self.signalled != 0 || folder == nil || Self.identity(of: directory) != folder || Self.identity(of: socketPath) == nil
        }
        return true
    }

    /// Accepts and serves clients on `listener` until `stop` says so (asked at least once a
    /// second); expired keys are dropped meanwhile. `run` calls it once set up.
    package func serve(_ listener: UnixSocket, until stop: () -> Bool) {
        while !stop() {
            held.expire()
            var p = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 1000) > 0, let connection = listener.accept() else { continue }
            accept(connection)
        }
    }

    /// Checks the peer and starts the connection's thread.
    private func accept(_ connection: UnixSocket) {
        guard let uid = try? connection.peerUID(), uid == geteuid() else { return }   // closed without a byte
        guard clients.add(1, ordering: .relaxed).newValue <= Self.maximumClients else {
            clients.subtract(1, ordering: .relaxed)
            return
        }
        // The connection belongs to its thread alone from here on.
        nonisolated(unsafe) let owned = connection
        let started = ClientThread.start { [self] in
            defer { clients.subtract(1, ordering: .relaxed) }
            serve(owned)
        }
        if !started { clients.subtract(1, ordering: .relaxed) }
    }

    /// Reads and answers messages until the client closes, breaks a deadline, or sends a
    /// message over the size cap.
    func serve(_ connection: UnixSocket) {
        var session = ConnectionSession()
        while true {
            var header = [UInt8](repeating: 0, count: 4)
            do {
                try header.withUnsafeMutableBytes { try connection.readExactly(4, into: $0, until: .after(seconds: idleSeconds)) }
            } catch { return }
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, length <= SSHAgentMessage.maximumLength else { return }
            var payload = [UInt8](repeating: 0, count: length)
            do {
                try payload.withUnsafeMutableBytes { try connection.readExactly(length, into: $0, until: .after(seconds: Self.messageSeconds)) }
            } catch {
                SecretBytes.wipe(&payload)
                return
            }
            var reply = handle(payload, session: &session)
            SecretBytes.wipe(&payload)
            var frame = SSHWriter()
            frame.string(reply)
            SecretBytes.wipe(&reply)
            do { try connection.writeAll(frame.bytes, until: .after(seconds: Self.messageSeconds)) } catch { return }
        }
    }

    /// (device, inode) of what is at `path`, nil when nothing is there.
    static func identity(of path: String) -> [UInt64]? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return [UInt64(st.st_dev), UInt64(st.st_ino)]
    }
}

/// What one connection carries between its messages.
struct ConnectionSession {
    var bindings = ConnectionBindings()
}

private func sshAgentSignalHandler(_ signal: Int32) {
    SSHAgentServer.signalled = signal
}

/// A detached thread per client.
enum ClientThread {
    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread. - Returns: whether it started.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let raw = Unmanaged.passRetained(Start(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { p in
                guard let p else { return nil }
                Unmanaged<Start>.fromOpaque(p).takeRetainedValue().body()
                return nil
            }, raw)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(raw).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
