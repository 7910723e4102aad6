import Synchronization

/// How another thread makes a keychain's keys unusable at once, while the thread that
/// performs an operation on it is still inside it (the team agent's serving thread waiting
/// for a stalled server when `kc lock -k team:NAME` or `kc-team agent --stop` arrives,
/// `docs/team.md`, "A stalled server").
///
/// `revoke()` zeroes, in place, every key hierarchy the keychain held (the master key, the
/// class keys, the blind-index keys), runs every wiper registered with `onRevoke` (a team
/// keychain's: its member keys, and its server connection, which is shut so that its
/// waiting statement ends and none follows), and from then on the keychain refuses every
/// operation as locked (`Keychain.unlockedKeys`). A hierarchy or wiper added after it is
/// wiped at once. What the serving thread computes meanwhile with the zeroed keys can go
/// nowhere: the connection refuses every round trip, and its result is a failure.
///
///     let revocation = keychain.revocation     // taken while no operation runs
///     …                                        // on another thread, during one:
///     revocation.revoke()
public final class KeyRevocation: Sendable {
    /// Whether `revoke` ran, and what it wipes.
    private struct State: ~Copyable {
        var revoked = false
        var wipers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    /// A revocation that has not happened.
    public init() {}

    /// Whether `revoke` ran.
    public var isRevoked: Bool { state.withLock { $0.revoked } }

    /// Registers `wipe`, run once by `revoke` (at once when it already ran).
    package func onRevoke(_ wipe: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.revoked { return true }
            s.wipers.append(wipe)
            return false
        }
        if now { wipe() }
    }

    /// Registers `keys` (zeroed in place by `revoke`), held weakly: keys the keychain no
    /// longer uses are wiped when their last reference goes, as always.
    func watch(_ keys: KeyHierarchy) {
        onRevoke { [weak keys] in keys?.wipe() }
    }

    /// Makes the keys unusable now, from any thread: every registered wiper runs once.
    public func revoke() {
        let wipers = state.withLock { s -> [@Sendable () -> Void] in
            guard !s.revoked else { return [] }
            s.revoked = true
            defer { s.wipers = [] }
            return s.wipers
        }
        for wipe in wipers { wipe() }
    }
}
