import Foundation
import Security
import Testing
import KCTestSupport

/// The other Security calls and constants the popular keychain wrappers use, written the
/// way they write them (docs/apple-compatibility.md, "Wrappers"): kSecAttrSynchronizableAny,
/// every protocol and authentication-type value, kSecReturnRef on passwords, Valet's
/// `[String: AnyHashable]` queries and persistent references, the authentication-UI keys,
/// KeychainSwift's pointer dance, SecBase.h's status names.
extension SecurityModuleTests {
    /// A keychain the Security API uses, opened with its password.
    private func idiomsHome() throws -> KCHome {
        let home = try KCHome()
        try home.createKeychain()
        #expect(KeychainConfiguration.use(keychain: home.defaultKeychain, password: KCHome.password) == errSecSuccess)
        return home
    }

    @Test func synchronizableAnyFindsAndDeletesBothKinds() throws {
        let home = try idiomsHome()
        defer { withExtendedLifetime(home) {} }
        // KeychainAccess: the same key once synchronizable and once not; KeychainSwift adds with `true`.
        for synchronizable in [kCFBooleanTrue!, kCFBooleanFalse!] {
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "sync",
                kSecAttrAccount as String: "key", kSecAttrSynchronizable as String: synchronizable,
                kSecValueData as String: Data("v\(synchronizable.boolValue)".utf8)
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "sync",
            kSecAttrAccount as String: "key", kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: true
        ]
        var result: AnyObject?
        // Without the key only the item that is not synchronizable matches, as Apple's.
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [[String: Any]])?.count == 1)
        query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        let both = try #require(result as? [[String: Any]])
        #expect(Set(both.compactMap { $0[kSecAttrSynchronizable as String] as? Bool }) == [true, false])
        query[kSecAttrSynchronizable as String] = true
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [[String: Any]])?.first?[kSecAttrSynchronizable as String] as? Int == 1)
        // KeychainAccess's removeAll and Valet's delete as compiled for macOS: kSecMatchLimitAll
        // is taken (every match is acted on anyway); another limit stays errSecParam, as on iOS.
        var delete: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "sync",
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny
        ]
        delete[kSecMatchLimit as String] = kSecMatchLimitOne
        #expect(SecItemDelete(delete as CFDictionary) == errSecParam)
        #expect(SecItemUpdate(delete as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecParam)
        delete[kSecMatchLimit as String] = kSecMatchLimitAll
        #expect(SecItemUpdate(delete as CFDictionary, [kSecAttrLabel as String: "both"] as CFDictionary) == errSecSuccess)
        query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [[String: Any]])?.map { $0[kSecAttrLabel as String] as? String } == ["both", "both"])
        #expect(SecItemDelete(delete as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecItemNotFound)
    }

    @Test func everyProtocolAndAuthenticationTypeComesBackAsGiven() throws {
        let home = try idiomsHome()
        defer { withExtendedLifetime(home) {} }
        let protocols: [CFString] = [
            kSecAttrProtocolFTP, kSecAttrProtocolFTPAccount, kSecAttrProtocolHTTP, kSecAttrProtocolIRC, kSecAttrProtocolNNTP,
            kSecAttrProtocolPOP3, kSecAttrProtocolSMTP, kSecAttrProtocolSOCKS, kSecAttrProtocolIMAP, kSecAttrProtocolLDAP,
            kSecAttrProtocolAppleTalk, kSecAttrProtocolAFP, kSecAttrProtocolTelnet, kSecAttrProtocolSSH, kSecAttrProtocolFTPS,
            kSecAttrProtocolHTTPS, kSecAttrProtocolHTTPProxy, kSecAttrProtocolHTTPSProxy, kSecAttrProtocolFTPProxy,
            kSecAttrProtocolSMB, kSecAttrProtocolRTSP, kSecAttrProtocolRTSPProxy, kSecAttrProtocolDAAP, kSecAttrProtocolEPPC,
            kSecAttrProtocolIPP, kSecAttrProtocolNNTPS, kSecAttrProtocolLDAPS, kSecAttrProtocolTelnetS, kSecAttrProtocolIMAPS,
            kSecAttrProtocolIRCS, kSecAttrProtocolPOP3S
        ]
        let authenticationTypes: [CFString] = [
            kSecAttrAuthenticationTypeNTLM, kSecAttrAuthenticationTypeMSN, kSecAttrAuthenticationTypeDPA,
            kSecAttrAuthenticationTypeRPA, kSecAttrAuthenticationTypeHTTPBasic, kSecAttrAuthenticationTypeHTTPDigest,
            kSecAttrAuthenticationTypeHTMLForm, kSecAttrAuthenticationTypeDefault
        ]
        #expect(Set(protocols).count == 31)
        #expect(Set(authenticationTypes).count == 8)
        // KeychainAccess's query: host, an optional port (nil for a URL without one), protocol and type as strings.
        let url = try #require(URL(string: "https://kishikawakatsumi.com"))
        for (index, proto) in protocols.enumerated() {
            let type = authenticationTypes[index % authenticationTypes.count]
            var query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: url.host as Any,
                kSecAttrProtocol as String: proto, kSecAttrAuthenticationType as String: type,
                kSecAttrAccount as String: "user", kSecAttrSynchronizable as String: kSecAttrSynchronizableAny
            ]
            if let port = url.port { query[kSecAttrPort as String] = port }
            var add = query
            add[kSecAttrSynchronizable as String] = kCFBooleanFalse
            add[kSecValueData as String] = Data(proto.utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            query[kSecReturnAttributes as String] = kCFBooleanTrue
            var result: AnyObject?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrProtocol as String] as? String == proto)
            #expect(attributes[kSecAttrAuthenticationType as String] as? String == type)
        }
        var all: AnyObject?
        #expect(
            SecItemCopyMatching(
                [
                    kSecClass as String: kSecClassInternetPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                    kSecReturnAttributes as String: true
                ] as CFDictionary, &all) == errSecSuccess)
        #expect(Set((all as? [[String: Any]] ?? []).compactMap { $0[kSecAttrProtocol as String] as? String }) == Set(protocols))
    }

    @Test func returnRefOnPasswordsIsNoErrorAndNoReference() throws {
        let home = try idiomsHome()
        defer { withExtendedLifetime(home) {} }
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ref",
            kSecAttrAccount as String: "k", kSecValueData as String: Data("v".utf8)
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // KeychainAccess's get(_:handler:): every return key at once.
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ref",
            kSecAttrAccount as String: "k", kSecMatchLimit as String: kSecMatchLimitOne,
            kSecReturnData as String: kCFBooleanTrue!, kSecReturnAttributes as String: kCFBooleanTrue!,
            kSecReturnRef as String: kCFBooleanTrue!, kSecReturnPersistentRef as String: kCFBooleanTrue!
        ]
        var result: AnyObject?
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        let attributes = try #require(result as? [String: Any])
        #expect(attributes[kSecValueData as String] as? Data == Data("v".utf8))
        #expect((attributes[kSecValuePersistentRef as String] as? Data)?.count == 20)
        #expect(attributes[kSecValueRef as String] == nil)
        // The reference alone: success, nothing to give.
        query = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ref", kSecReturnRef as String: true]
        result = "sentinel" as AnyObject
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result == nil)
    }

    @Test func valetStyleQueriesOfAnyHashableWork() throws {
        let home = try idiomsHome()
        defer { withExtendedLifetime(home) {} }
        // Valet's base query: [String: AnyHashable], an access control made with nil allocator and error.
        var base: [String: AnyHashable] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecAttrService as String: "VAL_VALSecureEnclaveValet_initWithIdentifier:accessibility:_id_WhenPasscodeSetThisDeviceOnly",
            kSecUseDataProtectionKeychain as String: true
        ]
        // (Without flags: reading the data of an item with flags needs a fresh password proof.)
        base[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, [], nil)
        var add = base
        add[kSecAttrAccount as String] = "key"
        add[kSecValueData as String] = Data("value".utf8)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // allKeys: attributes of every match, read back as [[String: AnyHashable]].
        var all = base
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        all[kSecReturnAttributes as String] = true
        var result: AnyObject?
        #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
        let matches = try #require(result as? [[String: AnyHashable]])
        #expect(matches.compactMap { $0[kSecAttrAccount as String] as? String } == ["key"])
        #expect(matches.first?[kSecAttrAccessControl as String] == base[kSecAttrAccessControl as String])
        // Migration: persistent references with attributes, then the data by reference alone (no class).
        var migrate: [String: AnyHashable] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            kSecReturnData as String: false, kSecReturnRef as String: false,
            kSecReturnPersistentRef as String: true
        ]
        migrate[kSecAttrService as String] = base[kSecAttrService as String]
        #expect(SecItemCopyMatching(migrate as CFDictionary, &result) == errSecSuccess)
        let items = try #require(result as? [[String: AnyHashable]])
        let reference = try #require(items.first?[kSecValuePersistentRef as String])
        let byReference: [String: AnyHashable] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
        #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("value".utf8))
        // An update of the data keeps the access control; delete by the base query.
        var one = base
        one[kSecAttrAccount as String] = "key"
        #expect(SecItemUpdate(one as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(base as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(base as CFDictionary) == errSecItemNotFound)
        // A Secure Enclave Valet's item has flags: its attributes are listed and it is deleted
        // without a proof, and its flags tell it apart from other flags.
        var guarded = base
        guarded[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(
            nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .biometryCurrentSet, nil)
        var addGuarded = guarded
        addGuarded[kSecAttrAccount as String] = "touch"
        addGuarded[kSecValueData as String] = Data("value".utf8)
        #expect(SecItemAdd(addGuarded as CFDictionary, nil) == errSecSuccess)
        var listGuarded = guarded
        listGuarded[kSecMatchLimit as String] = kSecMatchLimitAll
        listGuarded[kSecReturnAttributes as String] = true
        #expect(SecItemCopyMatching(listGuarded as CFDictionary, &result) == errSecSuccess)
        let listed = try #require(result as? [[String: AnyHashable]])
        #expect(listed.compactMap { $0[kSecAttrAccount as String] as? String } == ["touch"])
        #expect(listed.first?[kSecAttrAccessControl as String] == guarded[kSecAttrAccessControl as String])
        var otherFlags = base
        otherFlags[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(
            nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .devicePasscode, nil)
        #expect(SecItemDelete(otherFlags as CFDictionary) == errSecItemNotFound)   // other flags: not this item
        #expect(SecItemDelete(guarded as CFDictionary) == errSecSuccess)
    }

    @Test func authenticationUIKeysPassThroughAndContextsAreRefused() throws {
        let home = try idiomsHome()
        defer { withExtendedLifetime(home) {} }
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ui",
            kSecAttrAccount as String: "k"
        ]
        var add = item
        add[kSecValueData as String] = Data("v".utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // KeychainAccess's set: a copy with kSecUseAuthenticationUIFail (and the prompt), then an update.
        for ui in [kSecUseAuthenticationUIFail, kSecUseAuthenticationUIAllow, kSecUseAuthenticationUISkip] {
            var query = item
            query[kSecUseAuthenticationUI as String] = ui
            query[kSecUseOperationPrompt as String] = "Authenticate to update your password"
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        }
        // KeychainSwift's pointer dance.
        var result: AnyObject?
        var query = item
        query[kSecReturnData as String] = kCFBooleanTrue
        let status = withUnsafeMutablePointer(to: &result) { SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0)) }
        #expect(status == noErr)
        #expect(result as? Data == Data("v".utf8))
        // There is no LAContext on Linux: an authentication context is refused, not ignored.
        query[kSecUseAuthenticationContext as String] = NSObject()
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecUnimplemented)
    }

    @Test func secBaseStatusNamesHaveApplesValues() {
        // A few of the names KeychainAccess's error enum and its tests use, beside kc's own.
        let statuses: [(OSStatus, OSStatus)] = [
            (errSecOpWr, -49), (errSecInternalComponent, -2070), (errSecNotTrusted, -67843),
            (errSecOCSPUnavailable, -67632), (errSecInvalidEncoding, -67853), (errSecTimestampRevocationNotification, -67898),
            (errSecUnimplemented, -4), (errSecItemNotFound, -25300)
        ]
        for (status, value) in statuses { #expect(status == value) }
    }
}
