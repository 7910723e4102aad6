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
    /// What completing it does.
    package enum Kind {
        /// Unlock: completes with these objects (`ao`) once every keychain is held.
        case unlock(objects: [String])
        /// CreateCollection of a new keychain with this name: completes with its path (`o`)
        /// once the default keychain, which keeps the new one's password, is held.
        case createCollection(name: String)
    }

    package let kind: Kind
    /// The keychain paths that must be held by the agent (or unlockable from the default
    /// keychain) for it to complete.
    package let keychains: [String]
    /// When it gives up (CLOCK_MONOTONIC seconds), once `Prompt` was called.
    package var deadline: Double?
    /// The pinentry dialog asking for a password, while one is open.
    var dialog: PinentryDialog?
    /// The keychain the open dialog asks for.
    var dialogKeychain: String?
    /// Passwords typed so far (three wrong ones end the dialogs; `kc unlock` still works).
    var attempts = 0

    package init(id: String, owner: String, kind: Kind, keychains: [String]) {
        self.id = id
        self.owner = owner
        self.kind = kind
        self.keychains = keychains
    }

    /// CLOCK_MONOTONIC in seconds.
    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
