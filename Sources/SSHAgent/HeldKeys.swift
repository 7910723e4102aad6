import POSIXSupport
import Synchronization

/// A key `ssh-add` gave the agent for this session, with its constraints. It lives in
/// this process's memory only (`SecretBytes`), wiped when it is removed, expires, or the
/// agent stops.
public final class HeldKey: Sendable {
    /// The key.
    public let key: SigningKey
    /// Its comment (`ssh-add -l` shows it).
    public let comment: String
    /// What `ssh-add` attached.
    public let constraints: KeyConstraints
    /// When it expires (`-t`), nil for never.
    let expiry: Deadline?

    init(key: SigningKey, comment: String, constraints: KeyConstraints) {
        self.key = key
        self.comment = comment
        self.constraints = constraints
        expiry = constraints.lifetime.map { Deadline.after(seconds: Double($0)) }
    }
}

/// The keys `ssh-add` gave the agent, in the order added; expired ones are dropped (and
/// so wiped) on every look.
public final class HeldKeys: Sendable {
    private let keys = Mutex<[HeldKey]>([])

    /// None.
    public init() {}

    /// Every key still alive.
    public var all: [HeldKey] {
        keys.withLock { list in
            let now = Deadline.now
            list.removeAll { $0.expiry.map { $0 <= now } ?? false }
            return list
        }
    }

    /// The key whose public blob is `blob`.
    public func find(_ blob: [UInt8]) -> HeldKey? { all.first { $0.key.publicBlob == blob } }

    /// Adds a key, replacing one with the same public key.
    public func add(_ key: SigningKey, comment: String, constraints: KeyConstraints) {
        let held = HeldKey(key: key, comment: comment, constraints: constraints)
        keys.withLock { list in
            if let i = list.firstIndex(where: { $0.key.publicBlob == key.publicBlob }) {
                list[i] = held
            } else {
                list.append(held)
            }
        }
    }

    /// Removes the key whose public blob is `blob`. - Returns: whether there was one.
    public func remove(_ blob: [UInt8]) -> Bool {
        keys.withLock { list in
            guard let i = list.firstIndex(where: { $0.key.publicBlob == blob }) else { return false }
            list.remove(at: i)
            return true
        }
    }

    /// Removes every key.
    public func removeAll() { keys.withLock { $0.removeAll() } }

    /// Drops expired keys now (the server calls this once a second).
    public func expire() { _ = all }
}
