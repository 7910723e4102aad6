import Foundation
import Security
import Testing
import KCTestSupport

/// `SecAccessControl` and its companions as the keychain wrappers (KeychainAccess, Valet)
/// use them: made with SecAccessControlCreateWithFlags, failures through the CFError
/// out-parameter, stored with kSecAttrAccessControl and given back in attribute results.
/// In SecurityModuleTests' serialized suite: the Security API's keychain is process-wide.
extension SecurityModuleTests {
    /// A keychain the Security API uses, opened with its password.
    private func accessControlHome() throws -> KCHome {
        let home = try KCHome()
        try home.createKeychain()
        #expect(KeychainConfiguration.use(keychain: home.defaultKeychain, password: KCHome.password) == errSecSuccess)
        return home
    }

    /// The attributes of the generic password `account` of service `service`.
    private func attributes(service: String, account: String) throws -> [String: Any] {
        var result: AnyObject?
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrAccount as String: account, kSecReturnAttributes as String: kCFBooleanTrue!,
                                    kSecMatchLimit as String: kSecMatchLimitOne]
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        return try #require(result as? [String: Any])
    }

    @Test func accessControlRoundTripsThroughAddFindUpdateAndDelete() throws {
        let home = try accessControlHome()
        defer { withExtendedLifetime(home) {} }
        // KeychainAccess's way: the protection as CFTypeRef, the policy's raw value as flags.
        var error: Unmanaged<CFError>?
        let policy: UInt = 1 << 4   // KeychainAccess's AuthenticationPolicy.devicePasscode
        let access = try #require(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleAfterFirstUnlock as CFTypeRef,
                                                                  SecAccessControlCreateFlags(rawValue: CFOptionFlags(policy)), &error))
        #expect(error == nil)
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl",
                                  kSecAttrAccount as String: "guarded", kSecValueData as String: Data("s3cret".utf8),
                                  kSecAttrAccessControl as String: access]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // Apple gives the access control back as an object beside pdmn; kc's flags key stays inside it.
        var found = try attributes(service: "acl", account: "guarded")
        #expect(found[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock)
        #expect(found[kcAttrAccessControlFlags] == nil)
        let returned = try #require(found[kSecAttrAccessControl as String] as? SecAccessControl)   // KeychainAccess: `as! SecAccessControl`
        #expect(returned == access)
        #expect(returned.hashValue == access.hashValue)

        // Valet's way: the protection constant given directly, no allocator, no error pointer.
        let presence = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, nil))
        #expect(presence != access)
        // The access control finds the item by its protection and flags …
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl",
                                    kSecAttrAccessControl as String: access]
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        query[kSecAttrAccessControl as String] = presence
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)
        // … and an update replaces both.
        query[kSecAttrAccessControl as String] = access
        #expect(SecItemUpdate(query as CFDictionary, [kSecAttrAccessControl as String: presence] as CFDictionary) == errSecSuccess)
        found = try attributes(service: "acl", account: "guarded")
        #expect(found[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly)
        #expect(found[kSecAttrAccessControl as String] as? SecAccessControl == presence)
        // An access control without flags takes the flags away.
        let plain = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
        query[kSecAttrAccessControl as String] = presence
        #expect(SecItemUpdate(query as CFDictionary, [kSecAttrAccessControl as String: plain] as CFDictionary) == errSecSuccess)
        found = try attributes(service: "acl", account: "guarded")
        #expect(found[kSecAttrAccessControl as String] as? SecAccessControl == plain)
        // An item added with kSecAttrAccessible alone has an access control without flags too.
        var other = add
        other[kSecAttrAccount as String] = "plain"
        other[kSecAttrAccessControl as String] = nil
        other[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        #expect(SecItemAdd(other as CFDictionary, nil) == errSecSuccess)
        let derived = try attributes(service: "acl", account: "plain")[kSecAttrAccessControl as String] as? SecAccessControl
        #expect(derived == SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], nil))
        // The kc binary finds the item the module stored (its attributes need no proof).
        query[kSecAttrAccessControl as String] = plain
        #expect(SecItemUpdate(query as CFDictionary, [kSecAttrAccessControl as String: access] as CFDictionary) == errSecSuccess)
        let listed = try home.kc(["find", "-s", "acl", "-a", "guarded", "--json"], password: KCHome.password)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("guarded"), "\(listed.stdout)")
        #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrAccessControl as String: access] as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "guarded"] as CFDictionary, nil) == errSecItemNotFound)
    }

    @Test func invalidAccessControlsFailThroughTheErrorOutParameter() throws {
        func failure(_ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags) -> CFError? {
            var error: Unmanaged<CFError>?
            let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, &error)
            #expect(access == nil)
            return error?.takeRetainedValue()
        }
        let cases: [(CFTypeRef, SecAccessControlCreateFlags, String)] = [
            ("nonsense" as CFTypeRef, [], "invalid protection"),
            (kSecAttrAccessibleWhenUnlocked as CFTypeRef, [.or, .and, .devicePasscode, .biometryAny], "logical operation"),
            (kSecAttrAccessibleWhenUnlocked as CFTypeRef, [.biometryAny, .biometryCurrentSet], "bio constraint"),
            (kSecAttrAccessibleWhenUnlocked as CFTypeRef, [.userPresence, .devicePasscode], "kSecAccessControlUserPresence"),
            (NSNumber(value: 1), [], "invalid protection"),
        ]
        for (protection, flags, text) in cases {
            let error = try #require(failure(protection, flags))
            // KeychainAccess turns it into an NSError this way.
            #expect(CFErrorGetDomain(error) as String == "NSOSStatusErrorDomain")
            #expect(CFErrorGetCode(error) == CFIndex(errSecParam))
            let userInfo = CFErrorCopyUserInfo(error) as! [String: Any]
            #expect((userInfo[kCFErrorDescriptionKey as String] as? String)?.contains(text) == true, "\(userInfo)")
            let swiftError: Error = error
            #expect((swiftError as NSError).code == Int(errSecParam))
        }
        // Without an error pointer it still fails; with one, success leaves it nil.
        #expect(SecAccessControlCreateWithFlags(nil, "nonsense" as CFTypeRef, [], nil) == nil)
        var error: Unmanaged<CFError>?
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAlways, [.biometryAny, .or, .devicePasscode], &error) != nil)
        #expect(error == nil)
        // Apple's raw values.
        let raw: [(SecAccessControlCreateFlags, CFOptionFlags)] = [
            (.userPresence, 1), (.biometryAny, 2), (.touchIDAny, 2), (.biometryCurrentSet, 8), (.touchIDCurrentSet, 8),
            (.devicePasscode, 16), (.watch, 32), (.companion, 32), (.or, 16384), (.and, 32768),
            (.privateKeyUsage, 1 << 30), (.applicationPassword, 1 << 31),
        ]
        for (flag, value) in raw { #expect(flag.rawValue == value) }
    }

    @Test func accessControlConflictsAndUnsupportedFlagsAnswerAsApplesRules() throws {
        let home = try accessControlHome()
        defer { withExtendedLifetime(home) {} }
        let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "rules",
                                   kSecAttrAccount as String: "me", kSecValueData as String: Data("x".utf8)]
        func add(_ extra: [String: Any]) -> OSStatus {
            SecItemAdd(base.merging(extra) { _, b in b } as CFDictionary, nil)
        }
        let afterFirstUnlock = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [], nil))
        // Both keys: Apple refuses them when they differ, takes them when they agree.
        #expect(add([kSecAttrAccessControl as String: afterFirstUnlock, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]) == errSecParam)
        #expect(add([kSecAttrAccessControl as String: "ck"]) == errSecParam)
        for flags: SecAccessControlCreateFlags in [.applicationPassword, .privateKeyUsage, [.userPresence, .applicationPassword]] {
            let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, flags, nil))
            #expect(add([kSecAttrAccessControl as String: access]) == errSecUnimplemented)
        }
        #expect(add([kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave]) == errSecUnimplemented)
        #expect(add([kSecAttrAccessControl as String: afterFirstUnlock, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]) == errSecSuccess)
        #expect(try attributes(service: "rules", account: "me")[kSecAttrAccessible as String] as? String == "ck")
    }
}
