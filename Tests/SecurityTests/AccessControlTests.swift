import Foundation
@testable import Security
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
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account, kSecReturnAttributes as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne
        ]
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        return try #require(result as? [String: Any])
    }

    @Test func accessControlRoundTripsThroughAddFindUpdateAndDelete() throws {
        let home = try accessControlHome()
        defer { withExtendedLifetime(home) {} }
        // KeychainAccess's way: the protection as CFTypeRef, the policy's raw value as flags.
        var error: Unmanaged<CFError>?
        let noPolicy: UInt = 0
        let plain = try #require(
            SecAccessControlCreateWithFlags(
                kCFAllocatorDefault, kSecAttrAccessibleAfterFirstUnlock as CFTypeRef,
                SecAccessControlCreateFlags(rawValue: CFOptionFlags(noPolicy)), &error))
        #expect(error == nil)
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl",
            kSecAttrAccount as String: "guarded", kSecValueData as String: Data("s3cret".utf8),
            kSecAttrAccessControl as String: plain
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // Apple gives the access control back as an object beside pdmn; kc's flags key stays inside it.
        var found = try attributes(service: "acl", account: "guarded")
        #expect(found[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock)
        #expect(found[kcAttrAccessControlFlags] == nil)
        let returned = try #require(found[kSecAttrAccessControl as String] as? SecAccessControl)   // KeychainAccess: `as! SecAccessControl`
        #expect(returned == plain)
        #expect(returned.hashValue == plain.hashValue)

        // Valet's way: the protection constant given directly, no allocator, no error pointer.
        let presence = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, nil))
        #expect(presence != plain)
        // The access control finds the item by its protection and flags …
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl",
            kSecAttrAccessControl as String: plain
        ]
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        query[kSecAttrAccessControl as String] = presence
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)
        // … and an update replaces both (an item without flags needs no proof to change).
        let passcode = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, .devicePasscode, nil))
        query[kSecAttrAccessControl as String] = plain
        #expect(SecItemUpdate(query as CFDictionary, [kSecAttrAccessControl as String: passcode] as CFDictionary) == errSecSuccess)
        found = try attributes(service: "acl", account: "guarded")
        #expect(found[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock)
        #expect(found[kSecAttrAccessControl as String] as? SecAccessControl == passcode)
        query[kSecAttrAccessControl as String] = passcode
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        query[kSecAttrAccessControl as String] = plain   // same protection, no flags: matches by protection
        #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        // An item added with kSecAttrAccessible alone has an access control without flags.
        var other = add
        other[kSecAttrAccount as String] = "plain"
        other[kSecAttrAccessControl as String] = nil
        other[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        #expect(SecItemAdd(other as CFDictionary, nil) == errSecSuccess)
        let derived = try attributes(service: "acl", account: "plain")[kSecAttrAccessControl as String] as? SecAccessControl
        #expect(derived == SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], nil))
        // The kc binary finds the item the module stored (its attributes need no proof).
        let listed = try home.kc(["find", "-s", "acl", "-a", "guarded", "--json"], password: KCHome.password)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("guarded"), "\(listed.stdout)")
        #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrAccessControl as String: passcode] as CFDictionary) == errSecSuccess)
        #expect(
            SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "guarded"] as CFDictionary, nil)
                == errSecItemNotFound)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "plain"] as CFDictionary, nil) == errSecSuccess)
    }

    /// What the module hands to kc for an access control: its protection, and its flags
    /// only when there are some, except in an update, where 0 takes flags away.
    @Test func anAccessControlBecomesProtectionAndFlags() throws {
        let plain = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
        let presence = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [.userPresence], nil))
        for (access, use, flags) in [
            (plain, QueryBridge.Use.add, nil), (plain, .search, nil), (plain, .target, nil), (plain, .changes, 0),
            (presence, .add, 1), (presence, .search, 1), (presence, .changes, 1)
        ] as [(SecAccessControl, QueryBridge.Use, Int?)] {
            let out = try QueryBridge.query([kSecAttrAccessControl as String: access] as NSDictionary, for: use)
            #expect(out[kSecAttrAccessControl as String] == nil)
            #expect(out[kSecAttrAccessible as String] as? String == access.protection)
            #expect(out[kcAttrAccessControlFlags] as? Int == flags, "\(use)")
        }
        // Results: the object back, kc's key gone.
        let item = QueryBridge.result([kSecAttrAccessible as String: "ck", kcAttrAccessControlFlags: 1, kSecAttrAccount as String: "a"] as [String: Any])
        let attributes = try #require(item as? [String: Any])
        #expect(attributes[kSecAttrAccessControl as String] as? SecAccessControl == presence)
        #expect(attributes[kcAttrAccessControlFlags] == nil)
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
            (NSNumber(value: 1), [], "invalid protection")
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
            (.privateKeyUsage, 1 << 30), (.applicationPassword, 1 << 31)
        ]
        for (flag, value) in raw { #expect(flag.rawValue == value) }
    }

    @Test func accessControlConflictsAndUnsupportedFlagsAnswerAsApplesRules() throws {
        let home = try accessControlHome()
        defer { withExtendedLifetime(home) {} }
        let base: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "rules",
            kSecAttrAccount as String: "me", kSecValueData as String: Data("x".utf8)
        ]
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
