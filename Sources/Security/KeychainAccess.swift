#if os(Linux)
import Foundation

/// How the Security API reaches its keychain, call by call:
/// 1. a keychain opened by `KeychainConfiguration.use(keychain:password:)`;
/// 2. else the chosen keychain (configured, `$KC_KEYCHAIN`, or the default) through the agent
///    when it holds it unlocked: one socket round trip, no password in this process;
/// 3. else opened in this process with `$KC_PASSWORD` (one key derivation, then kept);
/// 4. else errSecInteractionNotAllowed, as Apple's calls return for a locked keychain.
final class KeychainAccess: @unchecked Sendable {
    static let shared = KeychainAccess()

    // Guards everything below, and every call on an opened Keychain (one SQLite
    // connection, not for two threads at once); Apple's API may be called from any thread.
    private let lock = NSLock()
    private var configuredPath: String?
    private var pinned: Keychain?
    private var opened: [String: Keychain] = [:]

    /// Uses the keychain at `path`, opened now with `password`.
    func use(path: String, password: String) throws {
        let real = KeychainLocation.realPath(KeychainLocation.resolve(path))
        try checkExists(real)
        let secret = try SecureBytes(copying: Array(password.utf8))
        let keychain = try Keychain.open(at: real, password: secret)
        lock.withLock {
            configuredPath = real
            pinned = keychain
        }
    }

    /// Uses the keychain at `path` (nil: `$KC_KEYCHAIN` or the default) the usual way.
    func use(path: String?) {
        lock.withLock {
            configuredPath = path.map { KeychainLocation.resolve($0) }
            pinned = nil
        }
    }

    /// Performs one operation and returns its result.
    func perform(_ operation: AgentProtocol.Operation, _ query: [String: Any], _ attributes: [String: Any]? = nil) throws -> Any? {
        let (configured, pinned) = lock.withLock { (configuredPath, self.pinned) }
        if let pinned {
            return try lock.withLock { try Self.run(operation, on: pinned, query, attributes) }
        }
        let path = KeychainLocation.realPath(configured ?? KeychainLocation.chosen)
        if let keychain = lock.withLock({ opened[path] }) {
            return try lock.withLock { try Self.run(operation, on: keychain, query, attributes) }
        }
        try checkExists(path)
        var client = AgentClient()
        // An unsafe agent folder (another account's /tmp/kc-UID) is skipped when the
        // password is at hand; otherwise its error says what to do.
        if getenv("KC_PASSWORD") != nil { client.unsafeFolder = .ignore { _ in } }
        switch try client.perform(path: path, operation, query: query, attributes: attributes) {
        case .result(let value): return value
        case .notHeld, .noAgent: break
        }
        return try lock.withLock {
            let keychain: Keychain
            if let cached = opened[path] {
                keychain = cached
            } else {
                guard let raw = getenv("KC_PASSWORD") else {
                    throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked",
                                        hint: "run `kc unlock`, set KC_PASSWORD, or call KeychainConfiguration.use(keychain:password:)")
                }
                let secret = try SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: strlen(raw)))
                keychain = try Keychain.open(at: path, password: secret)
                opened[path] = keychain
            }
            return try Self.run(operation, on: keychain, query, attributes)
        }
    }

    private static func run(_ operation: AgentProtocol.Operation, on keychain: Keychain, _ query: [String: Any],
                            _ attributes: [String: Any]?) throws -> Any? {
        switch operation {
        case .add: return try keychain.add(query)
        case .copyMatching: return try keychain.copyMatching(query)
        case .update: return try keychain.update(query, attributes ?? [:])
        case .delete: return try keychain.delete(query)
        case .count: return try keychain.count(query)
        case .verify: return try keychain.check()
        case .backup, .importItems, .copyMany:
            throw KeychainError(errSecUnimplemented, "the Security API makes no backups or imports; use `kc backup` / `kc import`")
        }
    }

    private func checkExists(_ path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw KeychainError(errSecNoSuchKeychain, "no keychain at \(path)", hint: "create it with `kc create`")
        }
    }
}
#endif
