import KeychainCore

/// A keychain whose password another keychain keeps as a generic password (service,
/// account): the agent unlocks it, or creates it with a random password it stores there,
/// without the password ever leaving the agent (`docs/protocol.md`, `unlockWithKept`).
/// The Secret Service provider's collections made over D-Bus are such keychains.
package struct KeptPassword: Equatable, Sendable {
    /// The keychain to unlock or create (absolute, real).
    package var path: String
    /// The keychain that keeps its password; the agent must hold it.
    package var holder: String
    /// The kept item's service.
    package var service: String
    /// The kept item's account.
    package var account: String
    /// Create the keychain (it must not exist) under a new random password, kept in
    /// `holder` (replacing an item a removed keychain left), instead of unlocking it.
    package var create: Bool

    package init(path: String, holder: String, service: String, account: String, create: Bool) {
        self.path = path
        self.holder = holder
        self.service = service
        self.account = account
        self.create = create
    }

    /// The query for the kept item.
    package var itemQuery: [String: Any] {
        [kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: account]
    }
}
