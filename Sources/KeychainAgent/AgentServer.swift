import KeychainCore
import POSIXSupport
import AgentWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `kc agent`: holds unlocked keychains and performs operations on them for clients of
/// the same user (`docs/protocol.md`). One thread, one request at a time: a key
/// derivation (unlock) is never run twice at once, and no key is wiped under a running
/// operation. Keys never leave this process.
///
/// `kc lock`, the idle timeout and the absolute cap lock a keychain the way Apple's class
/// keys do: a keychain with after-first-unlock items stays held, locked, with only the keys
/// that read those items (`Keychain.lockKeepingAfterFirstUnlock`), until the agent stops or
/// the boot changes (`BootSession`); everything else it answers "not held", so the client
/// asks for the password as for any locked keychain.
public final class AgentServer {
    /// One held keychain and its deadlines (CLOCK_BOOTTIME).
    final class Entry {
        let keychain: Keychain
        let idleTimeout: UInt64
        var idleDeadline: Deadline
        let absoluteDeadline: Deadline
        /// Locked, holding only what reads after-first-unlock items.
        var locked = false

        init(keychain: Keychain, idle: UInt64, maximum: UInt64) {
            self.keychain = keychain
            idleTimeout = idle
            idleDeadline = .after(seconds: Double(idle))
            absoluteDeadline = .after(seconds: Double(maximum))
        }
    }

    let paths: AgentPaths
    /// How long the agent stays with nothing unlocked before it exits.
    let grace: Double
    /// How long a client has to send a whole request.
    static let requestDeadline = 2.0
    private var entries: [String: Entry] = [:]
    /// The highest generation seen per keychain id, kept after lock: a file that goes
    /// back is refused at the next unlock.
    private var generations: [[UInt8]: UInt64] = [:]
    /// What this agent last wrote to the record of generations seen, per keychain id and
    /// path (the file agent only): a request that moved a generation past it records it
    /// (`SeenGenerations`), so that a key slot does not open an older copy later.
    private var recorded: [String: UInt64] = [:]
    private var emptySince = Deadline.now
    /// Wrong unlock passwords: each doubles the wait before the next is tried.
    private var backoff = PasswordBackoff()
    private var stopping = false
    /// The boot the agent started in: another one means every key goes.
    private let boot = BootSession.current()
    /// The listening socket while `run` runs (a `LockWatch` watches it during a request).
    private var listening: UnixSocket?
    /// Requests a `LockWatch` read during the last request, served next, in order.
    private var pending: [(UnixSocket, [UInt8])] = []

    /// Set by SIGTERM/SIGINT/SIGHUP.
    nonisolated(unsafe) static var signalled: Int32 = 0

    /// Opens the keychain an unlock names, with its password, refusing one older than the
    /// generation this agent has seen of it. `revocation` is the one the keychain is to
    /// have (`Keychain.revocation`): a lock or stop that arrives while it opens revokes it
    /// at once (the team agent's; the file agent's opener lets the keychain make its own).
    public typealias Opener = (
        _ path: String, _ password: borrowing SecureBytes, _ minimumGeneration: UInt64,
        _ revocation: KeyRevocation
    ) throws -> Keychain

    /// How this agent opens keychains: keychain files for `kc agent`, team keychains for
    /// `kc-team agent`.
    private let opener: Opener
    /// Whether this agent holds keychain files (absolute paths, kept passwords), as `kc agent`
    /// does; a team agent's keychains are `team:NAME` strings its opener checks.
    private let servesFiles: Bool

    /// The file agent, `kc agent`: keychain files by absolute path.
    public init(paths: AgentPaths = AgentPaths(), grace: Double = 60) {
        self.paths = paths
        self.grace = grace
        opener = { path, password, minimumGeneration, _ in
            try Keychain.open(at: path, password: password, minimumGeneration: minimumGeneration)
        }
        servesFiles = true
    }

    /// An agent whose keychains `opener` opens (the team agent: `team:NAME` paths, taken as
    /// they are, never resolved as files; the opener refuses what it does not know). It
    /// serves the same protocol with the same locking, expiry and proofs as the file agent,
    /// but never opens a file itself: a kept password (`unlockWithKept`) is refused.
    public init(paths: AgentPaths, grace: Double = 60, opener: @escaping Opener) {
        self.paths = paths
        self.grace = grace
        self.opener = opener
        servesFiles = false
    }

    /// The grace period, bounded to 0 s – 1 day whatever the environment said.
    private var graceSeconds: Double { grace.isFinite ? min(max(grace, 0), 86_400) : 60 }

    /// Runs until stopped, a signal, or `grace` seconds with nothing unlocked. Returns
    /// without error when another agent already runs.
    public func run() throws {
        ProcessHardening.disableCoreDumps()
        try paths.check(create: true)
        let lockFD = open(paths.lockFile, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw KeychainError(errSecIO, "cannot open \(paths.lockFile)") }
        defer { close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { return }   // one agent only
        // The lock file names the agent holding it (for `kc status` and tests).
        ftruncate(lockFD, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
        // Under the lock, a socket left by a killed agent is stale: replace it.
        unlink(paths.socket)
        let listener = try UnixSocket.listen(at: paths.socket)
        listening = listener
        let folder = Self.identity(of: paths.directory)
        defer {
            // Not in a folder made anew: the socket there is another agent's.
            if Self.identity(of: paths.directory) == folder { unlink(paths.socket) }
            listening = nil
            pending = []
        }
        for s in [SIGTERM, SIGINT, SIGHUP] { signal(s, agentSignalHandler) }
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)   // a signal to stop must get through
        signal(SIGPIPE, SIG_IGN)
        while !stopping && AgentServer.signalled == 0 {
            if !pending.isEmpty {
                var (connection, payload) = pending.removeFirst()
                respond(connection, &payload)
                continue
            }
            expire()
            if entries.isEmpty && Deadline.now.nanoseconds > emptySince.nanoseconds &+ UInt64(graceSeconds * 1e9) { break }
            // Once a second (two lstat): a socket removed, or its folder deleted (logout's
            // clean-up of /run/user/UID, a tmp cleaner) and perhaps made anew, leaves no
            // client a way in, not even `kc lock`. An agent nobody can reach must not sit on
            // unlocked keys: it wipes them and exits.
            if folder == nil || Self.identity(of: paths.directory) != folder || !Self.exists(paths.socket) { break }
            var p = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            // Wake at least once a second: poll's clock stops during suspend, BOOTTIME does not.
            let rc = poll(&p, 1, 1000)
            if rc > 0, let connection = listener.accept() {
                serve(connection)
            }
        }
        clear()
    }

    /// (device, inode) of what is at `path`, nil when nothing is there.
    private static func identity(of path: String) -> [UInt64]? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return [UInt64(st.st_dev), UInt64(st.st_ino)]
    }

    /// Whether anything is at `path` (a socket renamed and replaced, as a relay between a
    /// client and this agent does, still leaves one: the client's checks catch that).
    private static func exists(_ path: String) -> Bool { identity(of: path) != nil }

    /// Forgets every key when the boot changed; locks keychains whose idle or absolute
    /// deadline has passed.
    private func expire() {
        guard boot.isSameBoot(as: .current()) else {
            clear()
            return
        }
        let now = Deadline.now
        for (path, entry) in entries where !entry.locked && (entry.idleDeadline <= now || entry.absoluteDeadline <= now) {
            lockEntry(path)
        }
        // What a request left unrecorded (a team keychain's checkpoint, written at most once
        // a second) is recorded now: an agent that dies before its next request or lock
        // (kill -9, a power cut) must not have kept the newest head it verified to itself.
        for entry in entries.values where !entry.locked { entry.keychain.idle() }
    }

    /// Locks one keychain: it stays held, locked, when it has after-first-unlock items
    /// (their class key kept), else it is forgotten.
    private func lockEntry(_ path: String) {
        guard let entry = entries[path], !entry.locked else { return }
        if entry.keychain.lockKeepingAfterFirstUnlock() {
            entry.locked = true
        } else {
            remove(path)
        }
    }

    private func remove(_ path: String) {
        if let entry = entries.removeValue(forKey: path) {
            entry.keychain.lock()
        }
        if entries.isEmpty { emptySince = .now }
    }

    /// Wipes every key.
    func clear() {
        for path in Array(entries.keys) { remove(path) }
    }

    /// One connection: check the peer, read one request, answer it.
    private func serve(_ connection: UnixSocket) {
        guard let uid = try? connection.peerUID(), uid == geteuid() else { return }   // closed without a byte
        let deadline = Deadline.after(seconds: Self.requestDeadline)
        var payload: [UInt8]
        do {
            payload = try connection.readFrame(until: deadline)
        } catch {
            let e = error as? KeychainError ?? KeychainError(errSecInternalError)
            try? connection.writeAll(AgentReply.error(e).frame(), until: .after(seconds: 5))
            return
        }
        respond(connection, &payload)
    }

    /// Answers one request read from `connection`, and wipes it.
    private func respond(_ connection: UnixSocket, _ payload: inout [UInt8]) {
        var reply: [UInt8]
        defer { Sodium.wipe(&payload) }
        do {
            // `parse` copies the body out of the payload: an unlock's password, an add's secret.
            var (version, type, body) = try AgentProtocol.parse(payload)
            defer { Sodium.wipe(&body) }
            guard version == AgentProtocol.version else {
                throw KeychainError(
                    errSecNotAvailable, "the running kc agent speaks protocol \(AgentProtocol.version), this kc \(version)",
                    hint: "restart it: kc agent --stop && kc unlock")
            }
            expire()
            reply = try handle(type: type, body: body)
        } catch let error as KeychainError {
            reply = AgentReply.error(error).frame()
        } catch {
            reply = AgentReply.error(KeychainError(errSecInternalError)).frame()
        }
        try? connection.writeAll(reply, until: .after(seconds: 5))
        Sodium.wipe(&reply)
    }

    private func handle(type: UInt8, body: [UInt8]) throws -> [UInt8] {
        let request = try AgentRequest.decode(type: type, body: body)
        switch consume request {
        case .unlock(let path, let password, let idle, let maximum):
            try unlock(path: path, password: password, idle: idle, maximum: maximum)
            return AgentReply.ok(nil).frame()
        case .lock(let all, let path):
            if all {
                for path in Array(entries.keys) { lockEntry(path) }
            } else {
                lockEntry(path)
            }
            return AgentReply.ok(nil).frame()
        case .status:
            // A locked keychain is not listed: clients then ask for its password.
            let list: [Any] = entries.keys.sorted().compactMap { path in
                guard let e = entries[path], !e.locked else { return nil }
                return HeldKeychain(
                    path: path, idle: Int(clamping: e.idleDeadline.remainingSeconds),
                    maximum: Int(clamping: e.absoluteDeadline.remainingSeconds),
                    idleTimeout: Int(clamping: e.idleTimeout)
                ).dictionary
            }
            return AgentReply.ok(list).frame()
        case .stop:
            stopping = true
            clear()
            return AgentReply.ok(nil).frame()
        case .operation(let path, let request):
            let watch = beginWatch()
            defer { _ = endWatch(watch, path: path) }
            return try perform(request, on: path, presence: UserPresence())
        case .unlockWithKept(let kept):
            guard servesFiles else {
                throw KeychainError(errSecParam, "this agent holds team keychains: it keeps no keychain file's password")
            }
            guard let holder = entries[kept.holder], !holder.locked else { return AgentReply.notHeld.frame() }
            holder.idleDeadline = .after(seconds: Double(holder.idleTimeout))
            try unlock(kept, keptIn: holder.keychain)
            return AgentReply.ok(nil).frame()
        case .unlockWithSlot(let path, let kind, let secret, let idle, let maximum):
            guard servesFiles else { throw KeychainError(errSecParam, "team keychains have no key slots") }
            try unlock(path: path, password: secret, idle: idle, maximum: maximum, slot: kind)
            return AgentReply.ok(nil).frame()
        }
    }

    /// Performs an operation on a held keychain, without a proof of user presence (the agent
    /// takes none): "presence required", naming the items, when it would release a secret
    /// that needs one.
    private func perform(_ request: KeychainRequest, on path: String, presence: UserPresence) throws -> [UInt8] {
        guard let entry = entries[path] else { return AgentReply.notHeld.frame() }
        if !entry.locked { entry.idleDeadline = .after(seconds: Double(entry.idleTimeout)) }
        defer {
            let id = (try? entry.keychain.keychainID()) ?? []
            generations[id] = entry.keychain.generation
            if servesFiles { remember(id, at: path, entry.keychain.generation) }
            if !entry.keychain.holdsKeys { remove(path) }   // re-keyed elsewhere: forget it
        }
        do {
            let reply = try request.perform(on: entry.keychain, presence: presence)
            if entry.locked {
                // Locked, the agent answers only with after-first-unlock items found. "Nothing
                // matches" (a failed search, a count of 0) would tell a process of this user
                // that no when-unlocked item has the attributes it guessed, where "not held"
                // (which a when-unlocked match also gives) tells nothing.
                switch reply {
                case .results(let results):
                    // Several searches: one that needed the unlock, or found nothing, makes
                    // the client unlock for all.
                    if results.contains(where: {
                        if case .failure(let error) = $0 { return entry.keychain.isLockedOut(error) || error.status == errSecItemNotFound }
                        return false
                    }) {
                        return AgentReply.notHeld.frame()
                    }
                case .count(0):
                    return AgentReply.notHeld.frame()
                case .page(let page) where page.items.isEmpty:
                    return AgentReply.notHeld.frame()
                default:
                    break
                }
            }
            return AgentReply.ok(reply.wireValue).frame()
        } catch let required as UserPresenceRequired {
            // A locked keychain has forgotten the master key a proof is checked against:
            // the client unlocks it first (the password it types is then the proof).
            if entry.locked { return AgentReply.notHeld.frame() }
            // The client asks the user, naming these, and performs the request itself: no
            // proof of presence is ever taken here (protocol version 5).
            return AgentReply.presenceRequired(items: required.items).frame()
        } catch let error as KeychainError where entry.locked && (entry.keychain.isLockedOut(error) || error.status == errSecItemNotFound) {
            // A when-unlocked item, a write, or nothing found (see above): what a locked
            // keychain answers today.
            return AgentReply.notHeld.frame()
        }
    }

    /// Unlocks `kept.path` with the password `holder` keeps for it, or (`kept.create`) makes
    /// that keychain under a new random password kept there. The password is never sent:
    /// so no client needs to establish the agent for it, and a client of this user that
    /// asks learns nothing it could not read from the held `holder` itself.
    private func unlock(_ kept: KeptPassword, keptIn holder: Keychain) throws {
        guard kept.path.hasPrefix("/"), kept.path != kept.holder else {
            throw KeychainError(errSecParam, "the agent takes an absolute keychain path other than the holder's")
        }
        if !kept.create {
            var query = kept.itemQuery
            query[kSecReturnData] = true
            guard var bytes = (try holder.copyMatching(query) as? Data).map(Array.init) else {
                throw KeychainError(errSecItemNotFound, "no password is kept for \(kept.path)")
            }
            defer { Sodium.wipe(&bytes) }
            let password = try SecureBytes(copying: bytes, guarded: true)
            try unlock(path: kept.path, password: password, idle: 0, maximum: 0)
            return
        }
        // Text (base64 of 32 random bytes), so `kc find -w | kc unlock --password-stdin` works too.
        var random = Sodium.randomBytes(32)
        var text = Array(Data(random).base64EncodedString().utf8)
        Sodium.wipe(&random)
        defer { Sodium.wipe(&text) }
        let password = try SecureBytes(copying: text, guarded: true)
        // The file first, created exclusively: an existing keychain and its kept password
        // are never touched. Then the password is kept (replacing one a removed keychain of
        // that name left); if that fails, the new, empty keychain goes too.
        let keychain = try Keychain.create(at: kept.path, password: password, profile: .interactive)
        do {
            _ = try? holder.delete(kept.itemQuery)
            var item = kept.itemQuery
            item[kSecValueData] = Data(text)
            item[kSecAttrLabel] = "Password of the keychain \(kept.path) (kept by kc)"
            _ = try holder.add(item)
        } catch {
            keychain.lock()
            FileSafety.removeKeychainFiles(kept.path)
            throw error
        }
        generations[try keychain.keychainID()] = keychain.generation
        let stored = try keychain.timeouts()
        entries[kept.path] = Entry(keychain: keychain, idle: stored.idle, maximum: stored.maximum)
    }

    /// Unlocks `path` with its password or, with `slot`, the secret of a key slot of that
    /// kind (a recovery key: the file agent only), under the same back-off and checks.
    private func unlock(path: String, password: borrowing SecureBytes, idle: UInt64, maximum: UInt64, slot: KeySlotKind? = nil) throws {
        guard path.hasPrefix("/") || !servesFiles else { throw KeychainError(errSecParam, "the agent takes absolute keychain paths") }
        guard idle <= Keychain.maxTimeout, maximum <= Keychain.maxTimeout else {
            throw KeychainError(errSecParam, "timeouts are at most \(Keychain.maxTimeout) seconds (one year)")
        }
        let previous = entries[path]?.keychain
        let known = try previous.map { generations[try $0.keychainID()] ?? $0.generation } ?? 0
        try backoff.admit()
        // A lock or stop while it opens (waiting for a server) revokes what it opened so far.
        let revocation = KeyRevocation()
        let watch = beginWatch(unlocking: (path, revocation))
        let keychain: Keychain
        do {
            // A keychain it keeps (after-first-unlock items) is opened again without the file
            // check's own descriptor, whose close would drop the locks of the connection it
            // holds: the client's close then took itself for the last, unlinked the -shm, and
            // this agent never saw another process's write again (found by ReadmeTests).
            if let kind = slot {
                if let previous, let again = try previous.reopened(slot: kind, secret: password, minimumGeneration: known) {
                    keychain = again
                } else {
                    keychain = try Keychain.open(at: path, slot: kind, secret: password, minimumGeneration: known)
                }
            } else if servesFiles, let previous, let again = try previous.reopened(password: password, minimumGeneration: known) {
                keychain = again
            } else {
                keychain = try opener(path, password, known, revocation)
            }
        } catch {
            _ = endWatch(watch, path: path)
            if let error = error as? KeychainError, error.status == errSecAuthFailed { backoff.failed() }
            throw error
        }
        backoff.succeeded()
        if endWatch(watch, path: path) {
            keychain.lock()
            throw KeychainError(errSecInteractionNotAllowed, "\(path) was locked while it was being unlocked", hint: "unlock it again")
        }
        let id = try keychain.keychainID()
        if let seen = generations[id], keychain.generation < seen {
            throw KeychainError(
                errSecDecode, "\(path) went back from generation \(seen) to \(keychain.generation): an older copy was restored",
                hint: "stop the agent (kc agent --stop) and unlock it with its password to accept the restored file")
        }
        if servesFiles {
            // A slot opens an older copy without a password: nothing would tell the user that
            // the file was put back, and what they add would be sealed under the old key.
            if slot != nil {
                do {
                    try SeenGenerations.refuseOlder(id, at: path, keychain.generation)
                } catch {
                    keychain.lock()
                    throw error
                }
            }
            remember(id, at: path, keychain.generation, accepting: slot == nil, unlocking: true)
        }
        generations[id] = keychain.generation
        let stored = try keychain.timeouts()
        let entry = Entry(keychain: keychain, idle: idle > 0 ? idle : stored.idle, maximum: maximum > 0 ? maximum : stored.maximum)
        previous?.lock()
        entries[path] = entry
    }
}

extension AgentServer {
    /// Records the generation of keychain `id` at `path` in the record of generations seen
    /// when it moved past what this agent last recorded (or, `accepting`, whatever it is). A
    /// record that cannot be written is left as it is: the agent serves on, and slot unlocks
    /// are refused while it cannot be read.
    fileprivate func remember(_ id: [UInt8], at path: String, _ generation: UInt64, accepting: Bool = false, unlocking: Bool = false) {
        let key = Hex.encode(id) + path
        guard accepting || unlocking || generation > (recorded[key] ?? 0) else { return }
        // Only once written: a record that could not be (locked, unusable) is tried again at
        // the next request.
        if (try? SeenGenerations.record(id, at: path, generation, accepting: accepting, unlocking: unlocking)) != nil { recorded[key] = generation }
    }
}

extension AgentServer {
    /// Starts a `LockWatch` on the socket for the request about to run (the team agent
    /// only: its requests may wait for a server); nil for the file agent.
    /// - Parameter unlocking: the keychain being unlocked, and the revocation it gets.
    fileprivate func beginWatch(unlocking: (String, KeyRevocation)? = nil) -> LockWatch? {
        guard !servesFiles, let listening else { return nil }
        let held = entries.map { ($0.key, $0.value.keychain.revocation) } + (unlocking.map { [$0] } ?? [])
        return LockWatch(listener: listening, held: held)
    }

    /// Ends `watch` and applies what it saw: the locks and the stop it answered (their
    /// keys already revoked), and the requests it left, served next.
    /// - Returns: whether a lock or stop named `path` (a keychain being unlocked then is
    ///   locked again at once).
    fileprivate func endWatch(_ watch: LockWatch?, path: String) -> Bool {
        guard let watch else { return false }
        let outcome = watch.finish()
        pending += outcome.pending.map { ($0.connection, $0.payload) }
        if outcome.stop {
            stopping = true
            clear()
        } else if outcome.all {
            for held in Array(entries.keys) { lockEntry(held) }
        } else {
            for held in outcome.paths { lockEntry(held) }
        }
        return outcome.stop || outcome.all || outcome.paths.contains(path)
    }
}

private func agentSignalHandler(_ signal: Int32) {
    AgentServer.signalled = signal
}
