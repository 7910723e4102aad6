import Foundation
import Security
import Testing
import KCTestSupport

/// The Apple-style code in AppleStyle/ against real kc keychains, made and read with the
/// real `kc` binary. Serialized: the Security API's choice of keychain is process-wide.
@Suite(.serialized) struct SecurityModuleTests {
    /// A home with a keychain the Security API uses, opened with its password.
    private func configuredHome() throws -> KCHome {
        let home = try KCHome()
        try home.createKeychain()
        #expect(KeychainConfiguration.use(keychain: home.defaultKeychain, password: KCHome.password) == errSecSuccess)
        return home
    }

    @Test func aTokenStoreCreatesReadsUpdatesAndDeletes() throws {
        let home = try configuredHome()
        let manager = KeychainManager(service: "com.example.app")
        #expect(try manager.token(account: "alice") == nil)
        try manager.save(token: "t0k3n-1", account: "alice")
        try manager.save(token: "bob's token", account: "bob")
        #expect(try manager.token(account: "alice") == "t0k3n-1")
        // Saving again updates (SecItemAdd gives errSecDuplicateItem, then SecItemUpdate).
        try manager.save(token: "t0k3n-2", account: "alice")
        #expect(try manager.token(account: "alice") == "t0k3n-2")
        #expect(try manager.accounts() == ["alice", "bob"])
        try manager.deleteToken(account: "alice")
        try manager.deleteToken(account: "alice")   // errSecItemNotFound is success here
        #expect(try manager.token(account: "alice") == nil)
        #expect(try manager.accounts() == ["bob"])
        // What the app wrote, kc reads, and the other way round.
        let out = try home.kc(["find", "-s", "com.example.app", "-a", "bob", "-w"], password: KCHome.password)
        #expect(out.status == 0)
        #expect(out.stdout == "bob's token")
        let added = try home.kc(["add", "-s", "com.example.app", "-a", "carol", "-w", "from the terminal"], password: KCHome.password)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try manager.token(account: "carol") == "from the terminal")
        #expect(try manager.accounts() == ["bob", "carol"])
    }

    @Test func internetPasswordsInTheOlderStyle() throws {
        let home = try configuredHome()
        let login = Credentials(username: "alice@example.com", password: "pässwörd ✓")
        try CredentialStore.add(login, server: "example.com")
        #expect(try CredentialStore.credentials(server: "example.com") == login)
        #expect(CredentialStore.port(server: "example.com") == 443)
        // A second add is errSecDuplicateItem with Apple's message.
        let duplicate = #expect(throws: CredentialStoreError.self) { try CredentialStore.add(login, server: "example.com") }
        #expect(duplicate?.status == errSecDuplicateItem)
        #expect(duplicate?.message == "The specified item already exists in the keychain.")
        let missing = #expect(throws: CredentialStoreError.self) { try CredentialStore.credentials(server: "nowhere.example") }
        #expect(missing?.status == errSecItemNotFound)
        #expect(missing?.message == "The specified item could not be found in the keychain.")
        // kc sees an internet password with Apple's protocol code and the port.
        let out = try home.kc(["find", "--class", "internet", "-s", "example.com", "--json"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("\"protocol\":\"htps\"") || out.stdout.contains("\"protocol\": \"htps\""), "\(out.stdout)")
        #expect(out.stdout.contains("443"))
        #expect(CredentialStore.remove(server: "example.com") == errSecSuccess)
        #expect(CredentialStore.remove(server: "example.com") == errSecItemNotFound)
    }

    @Test func codableValuesAndPersistentReferences() throws {
        let home = try configuredHome()
        defer { withExtendedLifetime(home) {} }   // its folder goes with it, and the open keychain would lock
        let store = CodableKeychain<AuthSession>(service: "auth")
        let session = AuthSession(
            accessToken: "a.b.c", refreshToken: "r-1", expiresAt: Date(timeIntervalSince1970: 1_900_000_000),
            scopes: ["read", "write"])
        #expect(try store.value(forKey: "current") == nil)
        try store.set(session, forKey: "current")
        #expect(try store.value(forKey: "current") == session)
        var renewed = session
        renewed.accessToken = "d.e.f"
        try store.set(renewed, forKey: "current")   // SecItemUpdate this time
        #expect(try store.value(forKey: "current") == renewed)
        let reference = try #require(store.reference(forKey: "current"))
        #expect(reference.count == 20)
        #expect(try store.value(at: reference) == renewed)
        store.remove(forKey: "current")
        #expect(try store.value(forKey: "current") == nil)
        #expect(try store.value(at: reference) == nil)
    }

    @Test func resultsHaveApplesShapes() throws {
        let home = try configuredHome()
        defer { withExtendedLifetime(home) {} }   // its folder goes with it, and the open keychain would lock
        let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes"]
        for account in ["a", "b"] {
            var add = base
            add[kSecAttrAccount as String] = account
            add[kSecValueData as String] = Data(account.utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        var item: CFTypeRef?
        var query = base
        query[kSecAttrAccount as String] = "a"
        query[kSecReturnData as String] = true
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        #expect(item as? Data == Data("a".utf8))

        query[kSecReturnAttributes as String] = true
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        let attributes = try #require(item as? [String: Any])
        #expect(attributes[kSecValueData as String] as? Data == Data("a".utf8))
        #expect(attributes[kSecAttrAccount as String] as? String == "a")
        #expect(attributes[kSecAttrCreationDate as String] is Date)
        // Booleans come back as numbers 0/1, as Apple's CFNumber: both casts work.
        #expect(attributes[kSecAttrSynchronizable as String] as? Int == 0)
        #expect(attributes[kSecAttrSynchronizable as String] as? Bool == false)

        var all = base
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        all[kSecReturnAttributes as String] = true
        #expect(SecItemCopyMatching(all as CFDictionary, &item) == errSecSuccess)
        #expect((item as? [[String: Any]])?.count == 2)

        all[kSecReturnAttributes as String] = nil
        all[kSecReturnPersistentRef as String] = true
        #expect(SecItemCopyMatching(all as CFDictionary, &item) == errSecSuccess)
        #expect((item as? [Data])?.count == 2)

        // A failure leaves the result nil; bad queries are errSecParam as on Apple platforms.
        query[kSecAttrAccount as String] = "nobody"
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecItemNotFound)
        #expect(item == nil)
        #expect(SecItemAdd([kSecAttrAccount as String: "no class"] as CFDictionary, nil) == errSecParam)
        #expect(SecItemCopyMatching([kSecClass as String: "nonsense"] as CFDictionary, nil) == errSecNoSuchClass)
    }

    /// kc's Secret Service extension through Apple's API: the map inside the dictionary
    /// (bridged to an NSDictionary, or built as one) is taken as a map, matched as a subset,
    /// and comes back as `[String: String]`.
    @Test func aSecretServiceMapPassesThroughTheAPI() throws {
        let home = try configuredHome()
        defer { withExtendedLifetime(home) {} }
        let pairs = ["server": "github.com", "user": "alice"]
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ss",
            kcAttrSecretServiceAttributes: pairs, kcAttrContentType: "text/plain", kSecValueData as String: Data("t".utf8)
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)
        let query = NSMutableDictionary()
        query[kSecClass as String] = kSecClassGenericPassword
        query[kcAttrSecretServiceAttributes] = NSDictionary(dictionary: ["user": "alice"])
        query[kSecReturnAttributes as String] = true
        var item: CFTypeRef?
        #expect(SecItemCopyMatching(query, &item) == errSecSuccess)
        let attributes = try #require(item as? [String: Any])
        #expect(attributes[kcAttrSecretServiceAttributes] as? [String: String] == pairs)
        #expect(attributes[kcAttrContentType] as? String == "text/plain")
        query[kcAttrSecretServiceAttributes] = NSDictionary(dictionary: ["user": "bob"])
        #expect(SecItemCopyMatching(query, &item) == errSecItemNotFound)
        query[kcAttrSecretServiceAttributes] = NSDictionary(dictionary: ["user": 7])
        #expect(SecItemCopyMatching(query, &item) == errSecParam)
    }

    /// The keys docs/apple-compatibility.md lists as unsupported or ignored answer as it says.
    @Test func unsupportedAndIgnoredKeysAnswerAsDocumented() throws {
        let home = try configuredHome()
        defer { withExtendedLifetime(home) {} }   // its folder goes with it, and the open keychain would lock
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "doc",
            kSecAttrAccount as String: "me"
        ]
        var add = item
        add[kSecValueData as String] = Data("x".utf8)
        add[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        add[kSecUseDataProtectionKeychain as String] = true
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        func copy(_ extra: [String: Any]) -> OSStatus {
            SecItemCopyMatching(item.merging(extra) { _, b in b } as CFDictionary, nil)
        }
        // A password has no reference: Apple gives none and no error either.
        #expect(copy([kSecReturnRef as String: true]) == errSecSuccess)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecReturnRef as String: true] as CFDictionary, nil) == errSecUnimplemented)
        #expect(copy([kSecUseAuthenticationContext as String: "ctx"]) == errSecUnimplemented)
        #expect(copy([kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave]) == errSecUnimplemented)
        #expect(copy([kSecAttrPersistentReference as String: Data()]) == errSecParam)
        #expect(copy([kSecUseItemList as String: [Data()]]) == errSecParam)
        #expect(
            copy([
                kSecMatchPolicy as String: "any", kSecMatchTrustedOnly as String: true,
                kSecUseOperationPrompt as String: "Authenticate"
            ]) == errSecSuccess)
        #expect(copy([kSecReturnData as String: 1]) == errSecParam)   // not a boolean
        var inAdd = item
        inAdd[kSecAttrAccount as String] = "other"
        inAdd[kSecMatchLimit as String] = kSecMatchLimitOne
        #expect(SecItemAdd(inAdd as CFDictionary, nil) == errSecParam)
        #expect(SecItemAdd([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecParam)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)
        #expect(SecItemDelete(item as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(item as CFDictionary) == errSecItemNotFound)
    }

    /// kc's own prefix and substring key ("m_kcText", which this module gives no name) is
    /// treated as kSecMatchCaseInsensitive is: honoured by SecItemCopyMatching, errSecParam
    /// in SecItemUpdate and SecItemDelete like every kSecMatch… key.
    @Test func kcTextMatchingIsTreatedAsIgnoreCaseIs() throws {
        let home = try configuredHome()
        defer { withExtendedLifetime(home) {} }
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "GitHub.com",
            kSecAttrAccount as String: "me", kSecValueData as String: Data("x".utf8)
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "git"]
        func copy(_ extra: [String: Any]) -> OSStatus {
            SecItemCopyMatching(query.merging(extra) { _, b in b } as CFDictionary, nil)
        }
        #expect(copy([:]) == errSecItemNotFound)
        #expect(copy(["m_kcText": "prefix"]) == errSecItemNotFound, "case still counts")
        #expect(copy([kSecMatchCaseInsensitive as String: true]) == errSecItemNotFound)
        #expect(copy(["m_kcText": "prefix", kSecMatchCaseInsensitive as String: true]) == errSecSuccess)
        #expect(copy(["m_kcText": "regex"]) == errSecParam)
        for key: [String: Any] in [["m_kcText": "prefix"], [kSecMatchCaseInsensitive as String: true]] {
            let search = query.merging(key) { _, b in b }
            #expect(SecItemUpdate(search as CFDictionary, [kSecAttrComment as String: "c"] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(search as CFDictionary) == errSecParam)
        }
        #expect(SecItemDelete(add.filter { $0.key != kSecValueData as String } as CFDictionary) == errSecSuccess)
    }

    /// Without a configuration call: $KC_KEYCHAIN, through the agent, else $KC_PASSWORD,
    /// else errSecInteractionNotAllowed.
    @Test func theKeychainComesFromTheEnvironmentAndTheAgent() throws {
        let home = try KCHome()
        try home.createKeychain()
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "env",
            kSecAttrAccount as String: "me", kSecReturnData as String: true
        ]
        try withEnvironment([
            "KC_KEYCHAIN": home.defaultKeychain, "KC_AGENT_DIR": home.directory + "/agent",
            "KC_PASSWORD": nil
        ]) {
            KeychainConfiguration.useDefault()
            // Locked, and no password: errSecInteractionNotAllowed, at once.
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecInteractionNotAllowed)

            // Unlocked in the agent: the calls go through it.
            let unlocked = try home.kc(["unlock"], password: KCHome.password)
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "env",
                kSecAttrAccount as String: "me", kSecValueData as String: Data("via agent".utf8)
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
            #expect(item as? Data == Data("via agent".utf8))

            // Locked again: this process holds no key of its own.
            let locked = try home.kc(["lock"])
            #expect(locked.status == 0, "\(locked.stderr)")
            #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecInteractionNotAllowed)
        }
        try withEnvironment([
            "KC_KEYCHAIN": home.defaultKeychain, "KC_AGENT_DIR": home.directory + "/agent",
            "KC_PASSWORD": KCHome.password
        ]) {
            // With $KC_PASSWORD the keychain is opened in this process.
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
            #expect(item as? Data == Data("via agent".utf8))
        }
        try withEnvironment(["KC_KEYCHAIN": home.directory + "/missing.keychain-db", "KC_PASSWORD": nil]) {
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecNoSuchKeychain)
        }
        KeychainConfiguration.useDefault()
    }

    @Test func anExplicitConfigurationChecksThePassword() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(KeychainConfiguration.use(keychain: home.defaultKeychain, password: "wrong") == errSecAuthFailed)
        #expect(KeychainConfiguration.use(keychain: home.directory + "/none.keychain-db", password: "x") == errSecNoSuchKeychain)
        #expect(KeychainConfiguration.use(keychain: home.defaultKeychain, password: KCHome.password) == errSecSuccess)
        KeychainConfiguration.useDefault()
    }

    /// Issue 29, item 8, for programs that link the Security module: an impostor relaying the
    /// agent's socket (`AgentRelay`; a visible python process, which the module, not being kc,
    /// does not compare with any program) gets no proof and no protected secret. A read of a
    /// protected item asks on the terminal or fails (this test process has none); an add with
    /// `.userPresence` is written in this process with `$KC_PASSWORD`, never sent.
    @Test func aRelayAtTheAgentSocketGetsNoProofAndNoProtectedSecret() throws {
        let home = try KCHome()
        try home.createKeychain()
        #expect(try home.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711-sec"], password: KCHome.password).status == 0)
        #expect(try home.kc(["add", "-s", "news", "-a", "me", "-w", "plain"], password: KCHome.password).status == 0)
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let relay = try AgentRelay.start(home)
        defer { relay.stop() }
        try withEnvironment([
            "KC_KEYCHAIN": home.defaultKeychain, "KC_AGENT_DIR": home.directory + "/agent",
            "KC_PASSWORD": KCHome.password
        ]) {
            KeychainConfiguration.useDefault()
            var item: CFTypeRef?
            let plain: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "news",
                kSecReturnData as String: true
            ]
            #expect(SecItemCopyMatching(plain as CFDictionary, &item) == errSecSuccess && item as? Data == Data("plain".utf8))
            let bank: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bank",
                kSecReturnData as String: true
            ]
            #expect(SecItemCopyMatching(bank as CFDictionary, &item) == errSecInteractionNotAllowed, "no terminal to ask on")
            let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "vault",
                kSecAttrAccount as String: "me", kSecAttrAccessControl as String: access,
                kSecValueData as String: Data("security-module-secret".utf8)
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        KeychainConfiguration.useDefault()
        #expect(try home.kc(["find", "-s", "vault"]).stdout.contains("access-control: user-presence"))
        #expect(relay.connections >= 2, "the module went through the relay")
        #expect(!relay.received(KCHome.password), "the relay received the keychain password")
        #expect(!relay.received("pin-4711-sec") && !relay.received("security-module-secret"), "the relay received a protected secret")
    }

    /// Sets (or, for nil, removes) environment variables for `body`, then restores them.
    private func withEnvironment(_ values: [String: String?], _ body: () throws -> Void) throws {
        var saved: [String: String?] = [:]
        for (name, value) in values {
            saved[name] = ProcessInfo.processInfo.environment[name]
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        try body()
    }
}
