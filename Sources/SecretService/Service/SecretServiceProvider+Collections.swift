import KeychainCore
import KeychainClient
import AgentWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Collections made over D-Bus (`CreateCollection`, which aws-vault and the Go keyring
/// libraries call headless): each is a new kc keychain, `NAME.keychain-db` in the data
/// folder, under a random 256-bit password that the provider keeps in the default keychain
/// (generic password, service `kc-secret-service`, account NAME). So it is protected by the
/// default keychain's password, and unlocking the default keychain lets the provider unlock
/// it on demand (docs/secret-service.md, "Creating collections").
extension SecretServiceProvider {
    /// The service of the items that keep collections' passwords in the default keychain.
    static let collectionPasswordService = "kc-secret-service"

    /// The keychain name for a collection label: letters, digits, `.`, `_` and `-` kept,
    /// anything else `_`, at most 64 characters, never hidden or empty.
    static func keychainName(for label: String) -> String {
        var name = String(
            label.unicodeScalars.prefix(64).map { scalar -> Character in
                let ok =
                    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "." || scalar == "_" || scalar == "-"
                return ok ? Character(scalar) : "_"
            })
        while name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if name.hasSuffix(".keychain-db") { name += "_" }
        return name.isEmpty ? "collection" : name
    }

    /// The query for the item keeping collection `name`'s password.
    static func collectionPasswordQuery(_ name: String) -> [String: Any] {
        [kSecClass: kSecClassGenericPassword, kSecAttrService: collectionPasswordService, kSecAttrAccount: name]
    }

    /// The default keychain's path.
    var defaultKeychain: String { collections.alias("default")?.path ?? KeychainCollections.defaultFile }

    /// How long a kept password the agent refused is not tried again.
    static let refusedPasswordPause = 5.0

    /// Unlocks `keychain` in the agent with the password the default keychain keeps for it,
    /// when the default keychain is held and keeps one. The agent reads the password
    /// itself (`KeptPassword`): it never reaches the provider. A refused password (a
    /// keychain made again under that name) is not tried again for `refusedPasswordPause`
    /// seconds. - Returns: whether it is now held.
    func unlockFromDefault(_ keychain: String, held: Set<String>) -> Bool {
        guard keychain != defaultKeychain, held.contains(defaultKeychain),
            refusedUntil[keychain].map({ PendingPrompt.now() >= $0 }) ?? true,
            let collection = collections.all.first(where: { $0.path == keychain })
        else { return false }
        let kept = KeptPassword(
            path: keychain, holder: defaultKeychain, service: Self.collectionPasswordService,
            account: collection.name, create: false)
        let unlocked = (try? store.unlock(kept)) != nil
        refusedUntil[keychain] = unlocked ? nil : PendingPrompt.now() + Self.refusedPasswordPause
        return unlocked
    }

    /// Creates collection `name` now (the default keychain must be held). - Returns: its path.
    ///
    /// The agent makes the keychain under a random password that it keeps in the default
    /// keychain (`KeptPassword`), the file first and exclusively, so a keychain that exists
    /// (even one the list missed) and its kept password are never touched; when keeping the
    /// password fails, the new keychain goes too. No password reaches the provider, and the
    /// agent need not be one the provider can establish (as a normal user it cannot).
    func createKeychainCollection(_ name: String) throws(BusError) -> String {
        let file = KeychainLocation.realPath(KeychainLocation.directory + "/" + name + ".keychain-db")
        try store.unlock(
            KeptPassword(
                path: file, holder: defaultKeychain, service: Self.collectionPasswordService,
                account: name, create: true))
        collections.refresh()
        guard let made = collections.all.first(where: { $0.name == name }) else { throw .failed("the new keychain \(file) is not listed") }
        let objectPath = path(of: made)
        bus.signal(ObjectPath.root, Self.serviceInterface, "CollectionCreated", [.objectPath(objectPath)])
        return objectPath
    }
}
