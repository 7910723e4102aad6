import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One keychain the agent holds unlocked, as the `status` request answers it
/// (`docs/protocol.md` §3): seconds left until it locks.
public struct HeldKeychain: Equatable, Sendable {
    /// The keychain's real, absolute path.
    public var path: String
    /// Seconds until it locks for being idle.
    public var idle: Int
    /// Seconds until it locks whatever happens.
    public var maximum: Int
    /// The idle timeout an operation resets it to, in seconds.
    public var idleTimeout: Int

    /// A held keychain's figures.
    public init(path: String, idle: Int, maximum: Int, idleTimeout: Int) {
        self.path = path
        self.idle = idle
        self.maximum = maximum
        self.idleTimeout = idleTimeout
    }

    /// `{path, idle, maximum, idleTimeout}`.
    package var dictionary: [String: Any] { ["path": path, "idle": idle, "maximum": maximum, "idleTimeout": idleTimeout] }

    /// The list a `status` reply's value holds; a field left out reads as empty or 0 (an
    /// entry still says the agent holds something). - Throws: errSecIO when it is not a
    /// list of dictionaries.
    package static func list(_ value: Any?) throws -> [HeldKeychain] {
        let bad = KeychainError(errSecIO, "malformed status answer from the kc agent")
        // An agent built before kc encoded empty lists as lists sent empty data for none.
        if let data = value as? Data, data.isEmpty { return [] }
        guard let list = value as? [Any] else { throw bad }
        return try list.map { element in
            guard let d = element as? [String: Any] else { throw bad }
            return HeldKeychain(
                path: d["path"] as? String ?? "", idle: d["idle"] as? Int ?? 0, maximum: d["maximum"] as? Int ?? 0,
                idleTimeout: d["idleTimeout"] as? Int ?? 0)
        }
    }
}
