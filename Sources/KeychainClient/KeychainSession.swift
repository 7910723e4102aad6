import KeychainCore
import AgentWire
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The one way a front end reaches a keychain (`kc`, the Security module, the coming
/// Secret Service and team front ends): through the agent while it holds the keychain
/// unlocked (one socket round trip, no password, no key derivation), else opened in this
/// process once, with a password from the front end's own `PasswordProvider`.
///
///     let session = try KeychainSession(address: KeychainAddress(word), agent: AgentClient()) { path in
///         try askForPassword(path)
///     }
///     let secret = try session.copyMatching([kSecClass: kSecClassGenericPassword,
///                                            kSecAttrService: "github.com", kSecReturnData: true])
///
/// Safe to call from several threads: calls on a keychain opened here take turns (one
/// SQLite connection), calls through the agent do not wait for each other.
public final class KeychainSession: @unchecked Sendable {
    /// Gives the password of the keychain at the path it is called with, or throws
    /// (errSecInteractionNotAllowed when there is none to be had).
    public typealias PasswordProvider = (_ path: String) throws -> SecureBytes
    /// Asks the user for a proof of presence (the keychain's password, typed now) before a
    /// request releases items that require it (the prompt names them), or throws (errSecInteractionNotAllowed when
    /// nobody can answer, errSecUserCanceled when the user declines).
    public typealias PresenceProvider = (_ prompt: PresencePrompt) throws -> SecureBytes

    /// The keychain: a file, or a team keychain, which is reached only through the team
    /// agent and never opened in this process.
    public let address: KeychainAddress
    /// The agent's name for it (`KeychainAddress.agentPath`): the keychain file's real,
    /// absolute path; for a team keychain `team:NAME`.
    public let path: String
    /// How the agent is reached (the team agent for a team keychain).
    public let agent: AgentClient
    private let password: PasswordProvider
    private let lock = SessionLock()
    /// The keychain opened in this process; while nil, every request goes to the agent first.
    private var local: Keychain?
    /// Who gives proofs of user presence; nil: nobody can, and a request that needs one
    /// fails with errSecInteractionNotAllowed. Set it before the first request.
    public var presence: PresenceProvider?
    /// Whether to ask `password` again after a wrong one, given how many were wrong so far;
    /// nil: one try. kc asks again after a password typed at its prompt, three tries in all.
    public var askAgain: ((_ path: String, _ wrong: Int) -> Bool)?
    /// Called with the password that has just opened the keychain in this process (kc
    /// hands one typed at its prompt to the agent too: docs/security.md).
    public var didOpen: ((_ path: String, _ password: borrowing SecureBytes) -> Void)?

    /// A session on the existing keychain at `address` (a file's path is made absolute and
    /// real here).
    ///
    /// A team keychain is reached through the team agent only (`AgentClient.teamAgent`):
    /// `password` is never called for it. Whether it exists is settled when the team agent
    /// does not hold it (see `opened`), so a runner without a team file pays no extra round trip.
    /// - Throws: errSecNoSuchKeychain when there is no file there; the error's hint is
    ///   `missingHint` (how this front end creates or chooses a keychain).
    public init(address: KeychainAddress, agent: AgentClient, missingHint: String? = nil, password: @escaping PasswordProvider) throws {
        switch address {
        case .file(let file):
            try Self.requireExisting(file, hint: missingHint ?? "create it with `kc create \(file)`")
            self.password = password
        case .team:
            self.password = { path in throw KeychainError(errSecInteractionNotAllowed, "the team keychain \(path) is locked") }
        }
        self.address = address
        path = address.agentPath
        self.agent = agent.holding(address)
    }

    /// A session on the existing keychain an agent path names (`KeychainAddress.init(agentPath:)`):
    /// a file's path, or `team:NAME`.
    /// - Throws: what `init(address:…)` throws; errSecParam for `team:` and a malformed name.
    public convenience init(path: String, agent: AgentClient, missingHint: String? = nil, password: @escaping PasswordProvider) throws {
        try self.init(address: KeychainAddress(agentPath: path), agent: agent, missingHint: missingHint, password: password)
    }

    /// A session on a keychain this process has just opened or created; the agent is never asked.
    public init(opened keychain: Keychain, agent: AgentClient = AgentClient()) {
        address = .file(keychain.path)
        path = address.agentPath
        self.agent = agent
        password = { path in throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked") }
        local = keychain
    }

    /// Why a team keychain the team agent does not hold cannot be used: no team file on
    /// this device (errSecNoSuchKeychain), else locked (errSecInteractionNotAllowed). It is
    /// never opened here and no password is asked for: `kc unlock -k team:NAME` hands it
    /// to the team agent.
    public static func teamUnavailable(_ name: String) -> KeychainError {
        let location = KeychainAddress.team(name)
        guard exists(KeychainLocation.teamFile(name)) else {
            return KeychainError(
                errSecNoSuchKeychain,
                "no team keychain \(location) on this device (no \(KeychainLocation.teamFile(name)), and the team agent does not hold it)",
                hint: "join it with `kc team join`, create it with `kc team create`, or on a CI runner unlock it with `kc unlock --team-token-file FILE`")
        }
        return KeychainError(
            errSecInteractionNotAllowed, "the team keychain \(location) is locked",
            hint: "unlock it with `kc unlock -k \(location)` (a CI runner: `kc unlock --team-token-file FILE`)")
    }

    /// Whether anything exists at `path` (a dangling link counts: opening it will say why).
    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// errSecNoSuchKeychain, with `hint`, when nothing is at `path`.
    public static func requireExisting(_ path: String, hint: String) throws {
        guard !exists(path) else { return }
        throw KeychainError(errSecNoSuchKeychain, "no keychain at \(path)", hint: hint)
    }

    /// Settles, before anything else is asked for, whether the agent holds the keychain;
    /// if not, opens it here, asking for its password now (before, say, a secret prompt).
    public func prepare() throws {
        if lock.withLock({ local == nil }) {
            if (try agent.status() ?? []).contains(where: { $0.path == path }) { return }
        }
        _ = try lock.withLock { try opened() }
    }

    /// Opens the keychain in this process now (asking for its password), whether or not
    /// the agent holds it: a command that will write a secret user presence protects
    /// (`KeychainRequest.setsUserPresence`) asks for the password before the secret.
    public func prepareHere() throws {
        switch address {
        case .team: return try prepare()   // never opened here
        case .file: break
        }
        do {
            _ = try lock.withLock { try opened() }
        } catch let error as KeychainError where error.status == errSecInteractionNotAllowed {
            throw Self.presenceNeedsPassword(path, error)
        }
    }

    /// Why a write of a protected secret needs the keychain's password here.
    private static func presenceNeedsPassword(_ path: String, _ error: KeychainError) -> KeychainError {
        KeychainError(
            errSecInteractionNotAllowed,
            "an item that requires user presence is written in this process, so that its secret never goes to the agent's socket, and that needs the password of \(path)",
            hint: "type it on a terminal, or set KC_PASSWORD, or pass --password-file PATH or --password-stdin")
    }

    /// Performs one request: by the agent when it holds the keychain, else here.
    ///
    /// User presence (`docs/security.md`, "User presence") never crosses the agent's socket:
    /// - a request that would release protected secrets gets "presence required", naming
    ///   them; `presence` asks the user once, naming them, and the request is performed in
    ///   this process: the keychain opened here with the password typed (or, opened here
    ///   already, checked against it). Neither the password nor the secret goes to the
    ///   agent, so an impostor that relays or forges that reply learns nothing;
    /// - a request that writes a secret presence will protect (`setsUserPresence`: an add
    ///   or import of such an item, an update that sets the flag) is performed here too,
    ///   with the keychain's password from `password`.
    public func perform(_ request: KeychainRequest) throws -> KeychainReply {
        do {
            switch address {
            case .file where request.setsUserPresence: return try performHere(request)
            case .file, .team: return try perform(request, proof: nil)
            }
        } catch let required as UserPresenceRequired {
            guard let presence else {
                throw required.error(why: "this program has no way to ask for it")
            }
            switch address {
            case .team: throw required.error(why: "a team keychain is reached only through its agent, which takes no proof")
            case .file: break
            }
            let password = try presence(PresencePrompt(path: path, items: required.items, reason: request.operationPrompt))
            do {
                return try performProven(request, password: password, expecting: required.items)
            } catch let again as UserPresenceRequired {
                throw again.error(why: "the proof given was not accepted")
            }
        }
    }

    /// One attempt at `request` without a proof: by the agent, else here.
    private func perform(_ request: KeychainRequest, proof: UserPresence?) throws -> KeychainReply {
        var tooLarge = false
        if lock.withLock({ local == nil }) {
            switch try agent.performIfFits(path: path, request) {
            case .result(let reply)?: return reply
            case .notHeld?, .noAgent?: break
            case nil: tooLarge = true
            }
        }
        return try lock.withLock {
            let keychain: Keychain
            do {
                keychain = try opened()
            } catch let error as KeychainError where tooLarge && error.status == errSecInteractionNotAllowed {
                switch address {
                case .team:
                    throw KeychainError(
                        errSecDataTooLarge, "this request is larger than one agent message, and a team keychain is reached only through its agent",
                        hint: "import the file in parts")
                case .file:
                    throw KeychainError(
                        errSecInteractionNotAllowed,
                        "this request is larger than one agent message, so it runs here and needs the keychain's password",
                        hint: "set KC_PASSWORD, or pass --password-file PATH, or import the file in parts")
                }
            }
            return try request.perform(on: keychain, presence: proof ?? UserPresence())
        }
    }

    /// `request`, which writes a secret presence will protect, performed on the keychain
    /// opened here (its password from `password`), never through the agent.
    private func performHere(_ request: KeychainRequest) throws -> KeychainReply {
        try lock.withLock {
            let keychain: Keychain
            do {
                keychain = try opened()
            } catch let error as KeychainError where error.status == errSecInteractionNotAllowed {
                throw Self.presenceNeedsPassword(path, error)
            }
            return try request.perform(on: keychain, presence: UserPresence())
        }
    }

    /// `request` with the password the user typed as the proof, in this process: on the
    /// keychain opened here (the proof checked against it), else on the file opened now
    /// with that password (opening it is the proof) and closed again. Only the items the
    /// prompt named (`expecting`) are released.
    /// - Throws: errSecAuthFailed for a wrong password.
    private func performProven(_ request: KeychainRequest, password: consuming SecureBytes, expecting: [String]) throws -> KeychainReply {
        if lock.withLock({ local != nil }) {
            let proof = UserPresence(password: password, expecting: expecting)
            return try lock.withLock {
                guard let local else { throw KeychainError(errSecInternalError, "the keychain opened here was closed") }
                return try request.perform(on: local, presence: proof)
            }
        }
        let keychain: Keychain
        do {
            keychain = try Keychain.open(at: path, password: password)
        } catch let error as KeychainError where error.status == errSecAuthFailed {
            throw KeychainError(errSecAuthFailed, "wrong password for \(path): user presence was not confirmed")
        }
        defer { keychain.lock() }
        return try request.perform(on: keychain, presence: .openedWithTypedPassword(expecting: expecting))
    }

    /// The keychain opened here (asking for its password, again while `askAgain` says so)
    /// once. Called under the lock.
    /// A team keychain is never opened here: `teamUnavailable` says why it cannot be had.
    private func opened() throws -> Keychain {
        if let local { return local }
        switch address {
        case .team(let name): throw Self.teamUnavailable(name)
        case .file: break
        }
        try Keychain.checkFile(at: path)   // "not a kc keychain" before any "locked"
        var wrong = 0
        while true {
            let secret = try password(path)
            let keychain: Keychain
            do {
                keychain = try Keychain.open(at: path, password: secret)
            } catch let error as KeychainError where error.status == errSecAuthFailed {
                wrong += 1
                guard let askAgain, askAgain(path, wrong) else { throw error }
                continue
            }
            local = keychain
            didOpen?(path, secret)
            return keychain
        }
    }

    /// SecItemAdd. - Returns: the kSecReturn… result, or nil.
    public func add(_ query: [String: Any]) throws -> Any? { try perform(.add(query)).value() }

    /// SecItemCopyMatching.
    public func copyMatching(_ query: [String: Any]) throws -> Any? { try perform(.copyMatching(query)).value() }

    /// SecItemUpdate. - Returns: the number of items changed.
    @discardableResult
    public func update(_ query: [String: Any], _ attributes: [String: Any]) throws -> Int {
        try perform(.update(query, attributes: attributes)).count()
    }

    /// SecItemDelete. - Returns: the number of items deleted.
    @discardableResult
    public func delete(_ query: [String: Any]) throws -> Int { try perform(.delete(query)).count() }

    /// The number of items `query` matches.
    public func count(_ query: [String: Any]) throws -> Int { try perform(.count(query)).count() }

    /// A checked backup at `destination` (absolute). - Returns: the item count.
    public func backup(to destination: String, replacing: Bool) throws -> Int {
        try perform(.backup(BackupRequest(destination: destination, replacing: replacing))).count()
    }

    /// The whole-keychain check (`Keychain.check`). - Returns: the item count.
    public func verify() throws -> Int { try perform(.verify).count() }

    /// Imports items in one transaction: through the agent when it holds the keychain and
    /// the request fits in one message, else here (`progress` every 1,000 items).
    public func importItems(
        _ items: [ImportItem], updateExisting: Bool, dryRun: Bool, skipInvalid: Bool,
        progress: ((Int) -> Void)? = nil
    ) throws -> [ImportOutcome] {
        try prepare()   // settles whether the agent holds it before encoding a large request
        let request = ImportRequest(items: items, updateExisting: updateExisting, dryRun: dryRun, skipInvalid: skipInvalid, progress: progress)
        guard case .outcomes(let outcomes) = try perform(.importItems(request)) else {
            throw KeychainError(errSecInternalError, "expected import outcomes")
        }
        return outcomes
    }

    /// The results of `query` (attributes and persistent references, never secrets), page
    /// by page in insertion order (`Keychain.copyPage`): through the agent one round trip
    /// per page, so a listing of any size needs no reply that holds it all, and neither
    /// this process's pages nor the agent's memory grow with the keychain. `body` is called
    /// with each page's results. A listing stops with errSecIO once it passes `maxItems`
    /// items or `maxBytes` of encoded results (`SearchPage.encodedSize`): pages that each
    /// move on but never end (an agent that is not kc's) cannot make it ask for ever; and
    /// whatever the bounds, once it has taken `SearchPage.maxListingSeconds` (120 s). A
    /// query that returns attributes answers dictionaries only: another item is malformed.
    /// - Returns: how many there were in all.
    @discardableResult
    public func forEachPage(
        _ query: [String: Any], maxItems: Int = .max, maxBytes: Int = .max, _ body: ([Any]) throws -> Void
    ) throws -> Int {
        var after: Int64?
        var total = 0
        var bytes = 0
        let dictionaries = query[kSecReturnAttributes] as? Bool == true
        let deadline = Deadline.after(seconds: SearchPage.maxListingSeconds)
        repeat {
            guard case .page(let page) = try perform(.copyPage(query, after: after, limit: Self.pageLimit)) else {
                throw KeychainError(errSecInternalError, "expected a page of results")
            }
            if dictionaries, !page.items.allSatisfy({ $0 is [String: Any] }) {
                throw KeychainError(errSecIO, "malformed answer from the kc agent: a page of attributes holds an item that is not a dictionary")
            }
            total += page.items.count
            bytes += SearchPage.encodedSize(page.items)
            guard total <= maxItems, bytes <= maxBytes, Deadline.now < deadline else {
                throw KeychainError(
                    errSecIO,
                    "the agent's pages do not end: a listing holds at most \(SearchPage.maxListingItems) items and \(SearchPage.maxListingBytes >> 20) MiB, and takes at most \(Int(SearchPage.maxListingSeconds)) s",
                    hint: "if the agent is kc's, narrow the listing (--class, -s, -a); else stop what listens at the agent socket")
            }
            try body(page.items)
            after = page.next
        } while after != nil
        return total
    }

    /// Items per page of `forEachPage`: `SearchPage.defaultLimit`, or `KC_PAGE_ITEMS`
    /// (1 to `SearchPage.maxLimit`; for tests, docs/protocol.md), so that a few thousand
    /// items span many pages.
    public static var pageLimit: Int {
        guard let text = getenv("KC_PAGE_ITEMS").map({ String(cString: $0) }), let n = Int(text) else { return SearchPage.defaultLimit }
        return min(max(n, 1), SearchPage.maxLimit)
    }

    /// Several searches in one agent round trip (or here); each succeeds or fails alone.
    public func copyMany(_ queries: [[String: Any]]) throws -> [Result<Any?, KeychainError>] {
        guard case .results(let results) = try perform(.copyMany(BatchRequest(queries: queries))) else {
            throw KeychainError(errSecInternalError, "expected batch results")
        }
        return results
    }
}
