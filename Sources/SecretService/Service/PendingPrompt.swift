#if canImport(Glibc)
import Glibc
#endif

/// A prompt handed to a client (`Unlock` of a locked collection): it completes when every
/// keychain it waits for is unlocked — by `kc unlock` anywhere, or through the pinentry it
/// starts — and completes as dismissed when the client dismisses it or nobody answers within
/// the timeout. Every prompt emits `Completed` exactly once: a client never hangs.
package final class PendingPrompt {
    /// The path element after `/prompt/`.
    package let id: String
    /// The unique bus name of the client it was made for.
    package let owner: String
    /// The keychain paths that must be held by the agent for it to complete.
    package let keychains: [String]
    /// The object paths the completed prompt returns (`ao`).
    package let objects: [String]
    /// When it gives up (CLOCK_MONOTONIC seconds), once `Prompt` was called.
    package var deadline: Double?

    package init(id: String, owner: String, keychains: [String], objects: [String]) {
        self.id = id
        self.owner = owner
        self.keychains = keychains
        self.objects = objects
    }

    /// CLOCK_MONOTONIC in seconds.
    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
