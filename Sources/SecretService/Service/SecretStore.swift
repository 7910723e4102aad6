import KeychainCore
import KeychainClient
import AgentWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The provider's way to its keychains: the same client path as `kc` (`KeychainSession`),
/// but through the agent only. The provider holds no key and no password: a keychain the
/// agent does not hold is locked for D-Bus clients, exactly as it is for `kc`, and `kc lock`
/// or auto-lock lock it for them too.
package final class SecretStore {
    private let agent: AgentClient
    private var sessions: [String: KeychainSession] = [:]
    /// The `kc` the agent must be (and is started from): the one installed beside the provider.
    let kcExecutable: String

    package init(agent: AgentClient = AgentClient(), kcExecutable: String? = nil) {
        let kc = kcExecutable ?? AgentClient.besideOwnExecutable("kc")
        self.kcExecutable = kc
        // A secret (a CreateItem's, a new collection's password) goes only to an agent that
        // is this kc as far as the kernel shows it, as kc's own requests do.
        var client = agent
        if client.agentProgram == nil { client.agentProgram = kc }
        self.agent = client
    }

    /// Hands a keychain's password to the agent (the agent must be the `kc` beside the
    /// provider, established as for `kc unlock`); the password is wiped by the caller.
    package func unlock(_ path: String, password: borrowing SecureBytes) throws(BusError) {
        do {
            try agent.unlock(path: path, password: password, idle: 0, maximum: 0, executable: kcExecutable)
        } catch let error as KeychainError {
            throw Self.busError(error)
        } catch {
            throw .failed("\(error)")
        }
    }

    /// The keychains the agent holds unlocked now (one round trip; no timer is reset).
    package func heldPaths() -> Set<String> {
        Set(((try? agent.status()) ?? nil)?.map(\.path) ?? [])
    }

    /// Has the agent unlock, or create and unlock, a keychain whose password a held
    /// keychain keeps (the password stays in the agent).
    package func unlock(_ kept: KeptPassword) throws(BusError) {
        do {
            try agent.unlock(kept)
        } catch let error as KeychainError {
            throw Self.busError(error)
        } catch {
            throw .failed("\(error)")
        }
    }

    /// Has the agent forget the keychain's keys (`kc lock`).
    package func lock(_ path: String) throws(BusError) {
        do {
            _ = try agent.lock(path: path)
        } catch let error as KeychainError {
            throw Self.busError(error)
        } catch {
            throw .failed("\(error)")
        }
    }

    /// Performs `body` on the session of the keychain at `path`.
    /// - Throws: IsLocked when the agent does not hold it; NoSuchObject when the keychain
    ///   or the item is gone; Failed with kc's message otherwise.
    package func with<T>(_ path: String, _ body: (KeychainSession) throws -> T) throws(BusError) -> T {
        do {
            let session: KeychainSession
            if let known = sessions[path] {
                session = known
            } else {
                session = try KeychainSession(path: path, agent: agent) { path in
                    throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked")
                }
                session.presence = Self.refusePresence
                sessions[path] = session
            }
            return try body(session)
        } catch let error as KeychainError {
            throw Self.busError(error)
        } catch let error as BusError {
            throw error
        } catch {
            throw .failed("\(error)")
        }
    }

    /// Items that require user presence: the provider gives out (or changes) their secrets
    /// to nobody, since any program of the user's session may ask it over D-Bus and a
    /// prompt here could not tell who asks. GetSecret and SetSecret fail with AccessDenied;
    /// GetSecrets leaves such items out, as it leaves out locked ones (docs/secret-service.md).
    static func refusePresence(_ prompt: PresencePrompt) throws -> SecureBytes {
        throw BusError.accessDenied(
            "the item \(prompt.item) requires user presence; kc's Secret Service provider does not hand out its secret (read it with kc on a terminal)")
    }

    /// The D-Bus error for a keychain error (its message, never a secret).
    static func busError(_ error: KeychainError) -> BusError {
        switch error.status {
        case errSecInteractionNotAllowed, errSecAuthFailed, errSecNotAvailable:
            return .isLocked("the keychain is locked: unlock it with `kc unlock` (\(error.message))")
        case errSecItemNotFound, errSecNoSuchKeychain:
            return .noSuchObject(error.message)
        case errSecDuplicateItem:
            return BusError("org.freedesktop.DBus.Error.Failed", "an item with these attributes already exists")
        case errSecParam, errSecNoSuchAttr, errSecDataTooLarge:
            return .invalidArgs(error.message)
        default:
            return .failed(error.message)
        }
    }

    /// Every item of the keychain at `path` matching one of `queries` (`ItemMapping`), as
    /// (persistent reference, attributes); each item once. The agent answers page by page
    /// (`KeychainSession.forEachPage`), so a search of any size fits its messages; with
    /// `attributes` false only the references come (`Items`, `SearchItems`), and the
    /// attributes are empty. Once the results received pass the 32 MiB that one reply may
    /// carry (`SecretServiceProvider.maxArrayBytes`; a reference's encoding is shorter than
    /// its item's path), or past `SearchPage.maxListingItems` items received, it stops with
    /// `LimitsExceeded`, page by page: an agent whose pages never end (however small) holds
    /// the provider no longer than that, nor than the listing's 120 s.
    package func search(_ path: String, _ queries: [[String: Any]], attributes: Bool = true) throws(BusError) -> [(ref: [UInt8], attributes: [String: Any])] {
        try with(path) { session in
            var seen = Set<[UInt8]>()
            var out: [(ref: [UInt8], attributes: [String: Any])] = []
            var bytes = 0
            var received = 0
            for var query in queries {
                query[kSecMatchLimit] = nil
                query[kSecReturnAttributes] = attributes
                query[kSecReturnPersistentRef] = true
                try session.forEachPage(query) { page in
                    bytes += SearchPage.encodedSize(page)
                    received += page.count
                    guard bytes <= SecretServiceProvider.maxArrayBytes, received <= SearchPage.maxListingItems else {
                        throw BusError(
                            "org.freedesktop.DBus.Error.LimitsExceeded",
                            "the items found take more than one D-Bus message may carry on every bus (32 MiB): use SearchItems with more attributes")
                    }
                    for element in page {
                        let item = element as? [String: Any] ?? [:]
                        guard let ref = (item[kSecValuePersistentRef] ?? element) as? Data, seen.insert(Array(ref)).inserted else { continue }
                        out.append((Array(ref), item))
                    }
                }
            }
            return out
        }
    }

    /// The persistent reference of the first item (in insertion order) matching one of
    /// `queries`, in their order: one page of one item per query at most, however many match.
    package func first(_ path: String, _ queries: [[String: Any]]) throws(BusError) -> [UInt8]? {
        try with(path) { session in
            for var query in queries {
                query[kSecMatchLimit] = nil
                query[kSecReturnAttributes] = false
                query[kSecReturnPersistentRef] = true
                guard case .page(let page) = try session.perform(.copyPage(query, after: nil, limit: 1)) else {
                    throw KeychainError(errSecInternalError, "expected a page of results")
                }
                if let ref = page.items.first as? Data { return Array(ref) }
            }
            return nil
        }
    }

    /// The query naming one item by its persistent reference.
    package static func itemQuery(_ ref: [UInt8]) -> [String: Any] {
        [kSecClass: kSecClassGenericPassword, kSecValuePersistentRef: Data(ref)]
    }

    /// The attributes of one item. - Throws: NoSuchObject when it is gone.
    package func attributes(_ path: String, ref: [UInt8]) throws(BusError) -> [String: Any] {
        try with(path) { session in
            var q = Self.itemQuery(ref)
            q[kSecReturnAttributes] = true
            return try session.copyMatching(q) as? [String: Any] ?? [:]
        }
    }

    /// The attributes and the secret of one item, in one agent round trip.
    package func secretAndAttributes(_ path: String, ref: [UInt8]) throws(BusError) -> (attributes: [String: Any], secret: [UInt8]) {
        try with(path) { session in
            var q = Self.itemQuery(ref)
            q[kSecReturnData] = true
            q[kSecReturnAttributes] = true
            guard var found = try session.copyMatching(q) as? [String: Any] else {
                throw KeychainError(errSecItemNotFound, "the item is gone")
            }
            let secret = Array(found.removeValue(forKey: kSecValueData) as? Data ?? Data())
            return (found, secret)
        }
    }
}
