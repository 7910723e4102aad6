import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The keychain a command works on: through the agent when it holds the keychain
/// unlocked (one socket round trip, no password, no key derivation), else opened in this
/// process with a password from the usual sources.
final class KeychainHandle {
    /// The keychain file's real, absolute path (the agent's key for it).
    let path: String
    private let options: KeychainChoice
    private var local: Keychain?
    private var agentMayHoldIt: Bool

    /// A handle on an existing keychain. - Throws: errSecNoSuchKeychain when it is missing.
    init(_ options: KeychainChoice) throws {
        let chosen = options.path
        try Session.checkExists(chosen)
        path = KeychainLocation.realPath(chosen)
        self.options = options
        agentMayHoldIt = true
    }

    /// A handle on a keychain this process just opened or created.
    init(_ options: KeychainChoice, opened: Keychain) {
        path = KeychainLocation.realPath(opened.path)
        self.options = options
        local = opened
        agentMayHoldIt = false
    }

    /// Settles, before anything else is asked for, whether the agent holds the keychain;
    /// if not, opens it here (asking for its password first, before a secret prompt).
    func prepare() throws {
        if agentMayHoldIt && local == nil {
            let held = (try Session.agent(options).status() ?? []).contains { $0["path"] as? String == path }
            if held { return }
            agentMayHoldIt = false
        }
        _ = try opened()
    }

    func add(_ query: [String: Any]) throws -> Any? {
        try run(.add, query, nil, { $0 }) { try $0.add(query) }
    }

    func copyMatching(_ query: [String: Any]) throws -> Any? {
        try run(.copyMatching, query, nil, { $0 }) { try $0.copyMatching(query) }
    }

    @discardableResult
    func update(_ query: [String: Any], _ attributes: [String: Any]) throws -> Int {
        try run(.update, query, attributes, { $0 as? Int ?? 0 }) { try $0.update(query, attributes) }
    }

    @discardableResult
    func delete(_ query: [String: Any]) throws -> Int {
        try run(.delete, query, nil, { $0 as? Int ?? 0 }) { try $0.delete(query) }
    }

    /// A checked backup of the keychain at `destination` (absolute); the item count.
    func backup(to destination: String, replacing: Bool) throws -> Int {
        let request: [String: Any] = ["destination": destination, "replacing": replacing]
        return try run(.backup, request, nil, { $0 as? Int ?? 0 }) { try $0.backup(to: destination, replacing: replacing) }
    }

    /// A whole-keychain check (`Keychain.check`); the item count.
    func verify() throws -> Int {
        try run(.verify, [:], nil, { $0 as? Int ?? 0 }) { try $0.check() }
    }

    /// Imports items in one transaction: through the agent when it holds the keychain and
    /// the request fits in one message, else here (with `progress` every 1,000 items).
    func importItems(_ items: [ImportItem], updateExisting: Bool, dryRun: Bool, skipInvalid: Bool,
                     progress: ((Int) -> Void)?) throws -> [ImportOutcome] {
        try prepare()   // settles whether the agent holds it before encoding a large request
        if agentMayHoldIt && local == nil {
            let request = ImportRequest.encode(items, updateExisting: updateExisting, dryRun: dryRun, skipInvalid: skipInvalid)
            switch try Session.agent(options).performIfFits(path: path, .importItems, query: request) {
            case .result(let value)?: return try ImportRequest.decodeOutcomes(value, count: items.count)
            case .notHeld?, .noAgent?: agentMayHoldIt = false
            case nil:   // too large for one agent message: done here, with the password
                agentMayHoldIt = false
                do {
                    _ = try opened()
                } catch let error as KeychainError where error.status == errSecInteractionNotAllowed {
                    throw KeychainError(errSecInteractionNotAllowed,
                                        "this import (\(items.count) items) is larger than one agent message, so kc writes it itself and needs the keychain's password",
                                        hint: "set KC_PASSWORD, or pass --password-file PATH, or import the file in parts")
                }
            }
        }
        return try opened().importItems(items, updateExisting: updateExisting, dryRun: dryRun,
                                        skipInvalid: skipInvalid, progress: progress)
    }

    /// Several queries in one agent round trip (or here); each succeeds or fails alone.
    func copyMany(_ queries: [[String: Any]]) throws -> [Result<Any?, KeychainError>] {
        try run(.copyMany, BatchRequest.encode(queries), nil, { try BatchRequest.decode($0, count: queries.count) }) {
            BatchRequest.performLocally(queries, on: $0)
        }
    }

    func count(_ query: [String: Any]) throws -> Int {
        try run(.count, query, nil, { $0 as? Int ?? 0 }) { try $0.count(query) }
    }

    private func run<T>(_ operation: AgentProtocol.Operation, _ query: [String: Any], _ attributes: [String: Any]?,
                        _ convert: (Any?) throws -> T, local body: (Keychain) throws -> T) throws -> T {
        if agentMayHoldIt && local == nil {
            switch try Session.agent(options).perform(path: path, operation, query: query, attributes: attributes) {
            case .result(let value): return try convert(value)
            case .notHeld, .noAgent: agentMayHoldIt = false
            }
        }
        return try body(try opened())
    }

    /// Opens the keychain in this process (asking for its password) once.
    private func opened() throws -> Keychain {
        if let local { return local }
        let password = try PasswordSource.current(options, path: path)
        let keychain = try Keychain.open(at: path, password: password)
        local = keychain
        return keychain
    }
}

/// Opening and creating keychains for the commands.
enum Session {
    /// Whether the unsafe-folder warning was printed (once per process).
    nonisolated(unsafe) private static var warnedAboutFolder = false

    /// The agent client for a command on a keychain. When the agent folder is unsafe (the
    /// `/tmp/kc-UID` fallback made by another account) and a password can be had, kc warns
    /// once and works without the agent; without a password the error says what to do.
    static func agent(_ options: KeychainChoice) -> AgentClient {
        var client = AgentClient()
        client.isKC = true
        let hasPassword = options.passwordStdin || options.passwordFile != nil
            || PasswordSource.environmentPassword != nil || Terminal.isAvailable
        if hasPassword {
            client.unsafeFolder = .ignore { error in
                guard !Session.warnedAboutFolder else { return }
                Session.warnedAboutFolder = true
                Report.note("warning: \(error.message); not using the kc agent, opening the keychain with its password here")
                if let hint = error.hint { Report.note("hint: \(hint)") }
            }
        }
        return client
    }

    /// The keychain, creating the default one on first use (kc add).
    static func openOrCreateDefault(_ options: KeychainChoice, profile: KDFProfile) throws -> KeychainHandle {
        let path = options.path
        if !options.isExplicit && !exists(path) {
            let password = try PasswordSource.forNewKeychain(options, path: path)
            let keychain = try Keychain.create(at: path, password: password, profile: profile)
            Report.note("created the keychain \(path)")
            return KeychainHandle(options, opened: keychain)
        }
        return try KeychainHandle(options)
    }

    /// Opens an existing keychain in this process with its password (commands that need
    /// the password itself: passwd, settings).
    static func openWithPassword(_ options: KeychainChoice) throws -> Keychain {
        let path = options.path
        try checkExists(path)
        let password = try PasswordSource.current(options, path: path)
        return try Keychain.open(at: KeychainLocation.realPath(path), password: password)
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// A clear message for a missing keychain before any password is asked for.
    static func checkExists(_ path: String) throws {
        guard !exists(path) else { return }
        throw KeychainError(errSecNoSuchKeychain, "no keychain at \(path)",
                            hint: "create it with `kc create \(path)`, or choose another with -k or KC_KEYCHAIN")
    }
}
