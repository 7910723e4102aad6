import KeychainCore
import KeychainClient
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
        var name = String(label.unicodeScalars.prefix(64).map { scalar -> Character in
            let ok = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
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
    var defaultKeychain: String { collections.alias("default")?.path ?? KeychainLocation.realPath(KeychainLocation.chosen) }

    /// How long a kept password the agent refused is not tried again.
    static let refusedPasswordPause = 5.0

    /// Unlocks `keychain` in the agent with the password the default keychain keeps for it,
    /// when the default keychain is held and keeps one. A refused password (a keychain made
    /// again under that name) is not tried again for `refusedPasswordPause` seconds.
    /// - Returns: whether it is now held.
    func unlockFromDefault(_ keychain: String, held: Set<String>) -> Bool {
        guard keychain != defaultKeychain, held.contains(defaultKeychain),
              refusedUntil[keychain].map({ PendingPrompt.now() >= $0 }) ?? true,
              let collection = collections.all.first(where: { $0.path == keychain }) else { return false }
        var query = Self.collectionPasswordQuery(collection.name)
        query[kSecReturnData] = true
        guard let data = try? store.with(defaultKeychain, { try $0.copyMatching(query) }) as? Data else { return false }
        var bytes = Array(data)
        defer { Sodium.wipe(&bytes) }
        guard let password = try? SecureBytes(copying: bytes, guarded: true) else { return false }
        let unlocked = (try? store.unlock(keychain, password: password)) != nil
        refusedUntil[keychain] = unlocked ? nil : PendingPrompt.now() + Self.refusedPasswordPause
        return unlocked
    }

    /// Creates collection `name` now (the default keychain must be held). - Returns: its path.
    ///
    /// The file comes first, created exclusively, so a keychain that exists (even one the
    /// list missed) and its kept password are never touched. Then its password goes into
    /// the default keychain (replacing one a removed keychain of that name left) and the
    /// keychain to the agent. When either fails, both are removed: nothing is stored in the
    /// new keychain yet, and without its password nobody could ever open it. (As a normal
    /// user the agent refuses: kc cannot establish an agent it did not start.)
    func createKeychainCollection(_ name: String) throws(BusError) -> String {
        let file = KeychainLocation.directory + "/" + name + ".keychain-db"
        var random = Sodium.randomBytes(32)
        defer { Sodium.wipe(&random) }
        // Text, so that `kc find -w | kc unlock --password-stdin` can use it too.
        var text = Array(Data(random).base64EncodedString().utf8)
        defer { Sodium.wipe(&text) }
        let password: SecureBytes
        do {
            password = try SecureBytes(copying: text, guarded: true)
        } catch {
            throw .failed("\(error)")
        }
        do {
            _ = try Keychain.create(at: file, password: password, profile: .interactive)
        } catch let error as KeychainError {
            throw SecretStore.busError(error)
        } catch {
            throw .failed("\(error)")
        }
        do {
            _ = try? store.with(defaultKeychain) { try $0.delete(Self.collectionPasswordQuery(name)) }
            var keep = Self.collectionPasswordQuery(name)
            keep[kSecValueData] = Data(text)
            keep[kSecAttrLabel] = "Password of the Secret Service collection \(name) (made over D-Bus)"
            try store.with(defaultKeychain) { _ = try $0.add(keep) }
            try store.unlock(KeychainLocation.realPath(file), password: password)
        } catch {
            _ = try? store.with(defaultKeychain) { try $0.delete(Self.collectionPasswordQuery(name)) }
            FileSafety.removeKeychainFiles(file)
            throw BusError(error.name, "the collection \(name) could not be made ready, so nothing was kept: \(error.message)")
        }
        collections.refresh()
        guard let made = collections.all.first(where: { $0.name == name }) else { throw .failed("the new keychain \(file) is not listed") }
        let objectPath = path(of: made)
        bus.signal(ObjectPath.root, Self.serviceInterface, "CollectionCreated", [.objectPath(objectPath)])
        return objectPath
    }
}
