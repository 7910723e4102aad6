import Foundation
import Testing
@testable import KeychainCore

/// The four SecItem operations, their defaults, result shapes and errors, as Apple's.
@Suite struct SecItemTests {
    @Test func addThenFindDataGenericPassword() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("tok".utf8)]))
        let data = try t.keychain.copyMatching(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecReturnData: true]))
        #expect(data as? Data == Data("tok".utf8))
    }

    @Test func secItemFunctionsReturnStatuses() throws {
        let t = try TempKeychain()
        var result: Any?
        #expect(SecItemAdd(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]), nil, keychain: t.keychain) == errSecSuccess)
        #expect(SecItemAdd(genp([kSecAttrService: "s", kSecValueData: Data("y".utf8)]), nil, keychain: t.keychain) == errSecDuplicateItem)
        #expect(SecItemCopyMatching(genp([kSecAttrService: "s", kSecReturnData: true]), &result, keychain: t.keychain) == errSecSuccess)
        #expect(result as? Data == Data("x".utf8))
        #expect(SecItemUpdate(genp([kSecAttrService: "s"]), [kSecValueData: Data("z".utf8)], keychain: t.keychain) == errSecSuccess)
        #expect(SecItemCopyMatching(genp([kSecAttrService: "s", kSecReturnData: true]), &result, keychain: t.keychain) == errSecSuccess)
        #expect(result as? Data == Data("z".utf8))
        #expect(SecItemDelete(genp([kSecAttrService: "s"]), keychain: t.keychain) == errSecSuccess)
        #expect(SecItemDelete(genp([kSecAttrService: "s"]), keychain: t.keychain) == errSecItemNotFound)
        #expect(SecItemCopyMatching(genp([kSecAttrService: "s"]), &result, keychain: t.keychain) == errSecItemNotFound)
        #expect(SecItemUpdate(genp([kSecAttrService: "s"]), [kSecAttrLabel: "l"], keychain: t.keychain) == errSecItemNotFound)
    }

    @Test func internetPasswordRoundTrip() throws {
        let t = try TempKeychain()
        let attrs: [String: Any] = [
            kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob",
            kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecAttrPort: 8443, kSecAttrPath: "/api",
            kSecAttrAuthenticationType: kSecAttrAuthenticationTypeDefault, kSecValueData: Data("pw".utf8)
        ]
        try t.keychain.add(attrs)
        let found = try #require(
            try t.keychain.copyMatching([
                kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com",
                kSecReturnAttributes: true, kSecReturnData: true
            ]) as? [String: Any])
        #expect(found[kSecAttrProtocol] as? String == "htps")
        #expect(found[kSecAttrPort] as? Int == 8443)
        #expect(found[kSecAttrPath] as? String == "/api")
        #expect(found[kSecAttrLabel] as? String == "example.com", "label defaults to the server")
        #expect(found[kSecAttrSecurityDomain] as? String == "", "missing primary-key attributes are empty")
        #expect(found[kSecValueData] as? Data == Data("pw".utf8))
        // Same server and account on another port is a different item.
        var other = attrs
        other[kSecAttrPort] = 443
        try t.keychain.add(other)
        expectStatus(errSecDuplicateItem) { try t.keychain.add(other) }
        let all = try #require(
            try t.keychain.copyMatching([
                kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com",
                kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ]) as? [[String: Any]])
        #expect(all.count == 2)
        #expect(try t.keychain.delete([kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com"]) == 2)
    }

    @Test func certificateDerivesPrimaryKeyFromDER() throws {
        let t = try TempKeychain()
        let rsa = try Vectors.load("cert-rsa-v3.der"), ec = try Vectors.load("cert-ec-v3.der")
        try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data(rsa), kSecAttrLabel: "rsa"])
        // A second, different certificate without explicit issuer/serial is not a duplicate.
        try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data(ec), kSecAttrLabel: "ec"])
        expectStatus(errSecDuplicateItem) { try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data(rsa)]) }
        let attrs = try #require(
            try t.keychain.copyMatching([
                kSecClass: kSecClassCertificate, kSecAttrLabel: "rsa",
                kSecReturnAttributes: true
            ]) as? [String: Any])
        let parsed = try #require(DERCertificate(der: rsa))
        #expect(attrs[kSecAttrSerialNumber] as? Data == Data(parsed.serialNumber))
        #expect(attrs[kSecAttrIssuer] as? Data == Data(parsed.issuer))
        #expect(attrs[kSecAttrPublicKeyHash] as? Data == Data(parsed.publicKeyHash))
        #expect(attrs[kSecAttrCertificateType] as? Int == 3)
        #expect(attrs[kSecAttrAccessible] as? String == "dk", "certificates default to kSecAttrAccessibleAlways")
        expectStatus(errSecParam) { try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data("not der".utf8)]) }
        // Found by issuer and serial, as Apple code looks certificates up.
        let data = try t.keychain.copyMatching([
            kSecClass: kSecClassCertificate, kSecAttrIssuer: Data(parsed.issuer),
            kSecAttrSerialNumber: Data(parsed.serialNumber), kSecReturnData: true
        ])
        #expect(data as? Data == Data(rsa))
        #expect(try t.keychain.update([kSecClass: kSecClassCertificate, kSecAttrLabel: "ec"], [kSecAttrLabel: "ec2"]) == 1)
        #expect(try t.keychain.delete([kSecClass: kSecClassCertificate]) == 2)
    }

    @Test func keysAndTheirPrimaryKey() throws {
        let t = try TempKeychain()
        let tag = Data("com.example.key".utf8)
        try t.keychain.add([
            kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecAttrKeyType: kSecAttrKeyTypeEC,
            kSecAttrKeyClass: kSecAttrKeyClassPrivate, kSecAttrKeySizeInBits: 256, kSecValueData: Data([1, 2, 3])
        ])
        // Same tag, different key material: a different application label, so not a duplicate.
        try t.keychain.add([
            kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecAttrKeyType: kSecAttrKeyTypeEC,
            kSecAttrKeyClass: kSecAttrKeyClassPrivate, kSecAttrKeySizeInBits: 256, kSecValueData: Data([4, 5, 6])
        ])
        expectStatus(errSecDuplicateItem) {
            try t.keychain.add([
                kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecAttrKeyType: kSecAttrKeyTypeEC,
                kSecAttrKeyClass: kSecAttrKeyClassPrivate, kSecAttrKeySizeInBits: 256, kSecValueData: Data([1, 2, 3])
            ])
        }
        let found = try #require(
            try t.keychain.copyMatching([
                kSecClass: kSecClassKey, kSecAttrApplicationTag: tag,
                kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ]) as? [[String: Any]])
        #expect(found.count == 2)
        #expect(found.first?[kSecAttrKeyType] as? Int == 73, "the string \"73\" is stored and returned as a number")
        #expect(found.first?[kSecAttrKeyClass] as? Int == 1)
        #expect(found.first?[kSecAttrStartDate] as? Date == Date(timeIntervalSinceReferenceDate: 0))
        #expect(try t.keychain.count([kSecClass: kSecClassKey, kSecAttrKeyType: 73]) == 2, "the number matches the string form")
        #expect(try t.keychain.delete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag]) == 2)
    }

    @Test func identityJoinsCertificateAndKey() throws {
        let t = try TempKeychain()
        let der = try Vectors.load("cert-ec-v3.der")
        let cert = try #require(DERCertificate(der: der))
        try t.keychain.add([kSecClass: kSecClassCertificate, kSecValueData: Data(der), kSecAttrLabel: "me"])
        try t.keychain.add([
            kSecClass: kSecClassKey, kSecAttrApplicationLabel: Data(cert.publicKeyHash),
            kSecAttrKeyClass: kSecAttrKeyClassPrivate, kSecValueData: Data("private key".utf8)
        ])
        try t.keychain.add([kSecClass: kSecClassKey, kSecAttrApplicationLabel: Data([9, 9, 9]), kSecValueData: Data("lonely".utf8)])
        let ids = try #require(
            try t.keychain.copyMatching([
                kSecClass: kSecClassIdentity, kSecMatchLimit: kSecMatchLimitAll,
                kSecReturnAttributes: true, kSecReturnData: true
            ]) as? [[String: Any]])
        #expect(ids.count == 1)
        #expect(ids.first?[kSecValueData] as? Data == Data("private key".utf8))
        #expect(ids.first?["certdata"] as? Data == Data(der))
        #expect(ids.first?[kSecAttrLabel] as? String == "me", "the certificate's label wins")
        let ref = try #require(try t.keychain.copyMatching([kSecClass: kSecClassIdentity, kSecReturnPersistentRef: true]) as? Data)
        #expect(ref.prefix(4) == Data("idnt".utf8))
        #expect(
            try t.keychain.copyMatching([kSecValuePersistentRef: ref, kSecReturnData: true]) as? Data == Data("private key".utf8),
            "an identity's persistent reference finds it again")
        expectStatus(errSecParam) { try t.keychain.add([kSecClass: kSecClassIdentity, kSecValueData: Data([1])]) }
        #expect(try t.keychain.delete([kSecClass: kSecClassIdentity]) == 2)
        #expect(try t.keychain.count([kSecClass: kSecClassKey]) == 1, "the unpaired key stays")
        expectStatus(errSecItemNotFound) { _ = try t.keychain.copyMatching([kSecClass: kSecClassIdentity]) }
    }

    @Test func primaryKeyOfGenericPasswords() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecValueData: Data("1".utf8)]))
        expectStatus(errSecDuplicateItem) {
            try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecValueData: Data("2".utf8)]))
        }
        expectStatus(errSecDuplicateItem, "a different label alone does not make a new item") {
            try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecAttrLabel: "other"]))
        }
        expectStatus(errSecDuplicateItem, "accessibility is not part of the key") {
            try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock]))
        }
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "b"]))
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecAttrSynchronizable: true]))
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: "a", kSecAttrAccessGroup: "team.group"]))
        // The same bytes as Data and as String are the same key.
        expectStatus(errSecDuplicateItem) { try t.keychain.add(genp([kSecAttrService: Data("svc".utf8), kSecAttrAccount: "b"])) }
        // Missing account is "", so the second account-less item is a duplicate.
        try t.keychain.add(genp([kSecAttrService: "svc2"]))
        expectStatus(errSecDuplicateItem) { try t.keychain.add(genp([kSecAttrService: "svc2", kSecAttrAccount: ""])) }
        let found = try t.keychain.copyMatching(genp([kSecAttrService: "svc2", kSecAttrAccount: "", kSecReturnAttributes: true])) as? [String: Any]
        #expect(found?[kSecAttrAccount] as? String == "")
    }

    @Test func synchronizableItemsAreHiddenUnlessAsked() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecAttrSynchronizable: true, kSecValueData: Data("sync".utf8)]))
        expectStatus(errSecItemNotFound) { _ = try t.keychain.copyMatching(genp([kSecAttrService: "s"])) }
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "s", kSecAttrSynchronizable: true, kSecReturnData: true])) as? Data == Data("sync".utf8))
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("local".utf8)]))
        #expect(try t.keychain.count(genp([kSecAttrService: "s", kSecAttrSynchronizable: kSecAttrSynchronizableAny, kSecMatchLimit: kSecMatchLimitAll])) == 2)
        let attrs = try t.keychain.copyMatching(genp([kSecAttrService: "s", kSecReturnAttributes: true])) as? [String: Any]
        #expect(attrs?[kSecAttrSynchronizable] as? Bool == false)
    }

    @Test func defaultsAndDates() throws {
        let t = try TempKeychain()
        let before = Date()
        let added = try #require(
            try t.keychain.add(
                genp([
                    kSecAttrService: "svc", kSecValueData: Data("x".utf8),
                    kSecAttrCreationDate: Date(timeIntervalSince1970: 0),
                    kSecReturnAttributes: true
                ])) as? [String: Any])
        let cdat = try #require(added[kSecAttrCreationDate] as? Date)
        let mdat = try #require(added[kSecAttrModificationDate] as? Date)
        #expect(cdat >= before.addingTimeInterval(-1), "the core sets the creation date, ignoring the caller's")
        #expect(cdat == mdat)
        #expect(added[kSecAttrAccessible] as? String == "ak")
        #expect(added[kSecAttrLabel] as? String == "svc", "label defaults to the service")
        #expect(added[kSecAttrAccount] as? String == "")
        #expect(added[kSecAttrAccessGroup] as? String == "")
        #expect(added[kSecValueData] == nil, "attributes alone carry no data")
        try t.keychain.update(genp([kSecAttrService: "svc"]), [kSecAttrComment: "changed"])
        let after = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "svc", kSecReturnAttributes: true])) as? [String: Any])
        #expect((after[kSecAttrModificationDate] as? Date).map { $0 > mdat } == true, "update moves the modification date")
        #expect(after[kSecAttrCreationDate] as? Date == cdat)
        #expect(after[kSecAttrComment] as? String == "changed")
    }

    /// Security review, F6. DESIGN: "Creation and modification dates are always set by the
    /// core." Update skipped `mdat` but applied a caller's `cdat`.
    @Test func updateDoesNotSetTheCreationDate() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)]))
        let forged = Date(timeIntervalSinceReferenceDate: 0)
        do {
            try t.keychain.update(genp([kSecAttrService: "s"]), [kSecAttrCreationDate: forged])
        } catch let e as KeychainError {
            #expect(e.status == errSecParam || e.status == errSecNoSuchAttr)
            return
        }
        let attrs = try #require(try t.keychain.copyMatching(genp([kSecAttrService: "s", kSecReturnAttributes: true])) as? [String: Any])
        #expect(attrs[kSecAttrCreationDate] as? Date != forged, "cdat was overwritten by the caller")
    }

    @Test func resultShapes() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s", kSecAttrAccount: "1", kSecValueData: Data("one".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "s", kSecAttrAccount: "2", kSecValueData: Data("two".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "s", kSecAttrAccount: "3"]))
        let q = genp([kSecAttrService: "s"])
        #expect(try t.keychain.copyMatching(q) == nil, "limit one, nothing asked: success with no result")
        var all = q
        all[kSecMatchLimit] = kSecMatchLimitAll
        #expect((try t.keychain.copyMatching(all) as? [Any])?.isEmpty == true, "limit all, nothing asked: an empty array")
        var one = q
        one[kSecReturnData] = true
        #expect(try t.keychain.copyMatching(one) as? Data == Data("one".utf8), "default limit is one, in insertion order")
        var number1 = one
        number1[kSecMatchLimit] = 1
        #expect(try t.keychain.copyMatching(number1) is Data, "a limit of the number 1 gives a single value")
        var two = one
        two[kSecMatchLimit] = 2
        #expect((try t.keychain.copyMatching(two) as? [Data])?.count == 2)
        var allData = all
        allData[kSecReturnData] = true
        #expect((try t.keychain.copyMatching(allData) as? [Data]) == [Data("one".utf8), Data("two".utf8)], "an item without data is left out")
        var zero = one
        zero[kSecMatchLimit] = 0
        expectStatus(errSecItemNotFound) { _ = try t.keychain.copyMatching(zero) }
        var attrsAndRef = all
        attrsAndRef[kSecReturnAttributes] = true
        attrsAndRef[kSecReturnPersistentRef] = true
        let dicts = try #require(try t.keychain.copyMatching(attrsAndRef) as? [[String: Any]])
        #expect(dicts.count == 3)
        #expect(dicts.allSatisfy { ($0[kSecValuePersistentRef] as? Data)?.count == 20 && $0[kSecValueData] == nil && $0[kSecClass] == nil })
        var dataAndRef = one
        dataAndRef[kSecReturnPersistentRef] = true
        let dr = try #require(try t.keychain.copyMatching(dataAndRef) as? [String: Any])
        #expect(dr[kSecValueData] as? Data == Data("one".utf8))
        #expect(dr[kSecAttrAccount] as? String == "1", "data + persistent ref also carries the attributes")
        let ref = try #require(dr[kSecValuePersistentRef] as? Data)
        #expect(
            try t.keychain.copyMatching([kSecValuePersistentRef: ref, kSecReturnData: true]) as? Data == Data("one".utf8),
            "a persistent reference alone finds the item, without kSecClass")
        expectStatus(errSecParam) { _ = try t.keychain.copyMatching([kSecValuePersistentRef: ref, kSecAttrAccount: "1"]) }
        let pr = try t.keychain.copyMatching(genp([kSecAttrService: "s", kSecReturnPersistentRef: true]))
        #expect(pr as? Data == ref, "a persistent reference alone is Data")
        #expect(try t.keychain.delete([kSecValuePersistentRef: ref]) == 1)
    }

    @Test func updateAndDeleteActOnEveryMatch() throws {
        let t = try TempKeychain()
        for a in ["x", "y", "z"] {
            try t.keychain.add(genp([kSecAttrService: "multi", kSecAttrAccount: a, kSecValueData: Data(a.utf8)]))
        }
        try t.keychain.add(genp([kSecAttrService: "other", kSecValueData: Data("keep".utf8)]))
        #expect(try t.keychain.update(genp([kSecAttrService: "multi"]), [kSecAttrComment: "all"]) == 3)
        #expect(try t.keychain.count(genp([kSecAttrComment: "all", kSecMatchLimit: kSecMatchLimitAll])) == 3)
        // The data survives an attribute-only update (it is re-sealed under a new key).
        #expect(try t.keychain.copyMatching(genp([kSecAttrAccount: "y", kSecReturnData: true])) as? Data == Data("y".utf8))
        // An update that would make two items share a primary key changes nothing.
        expectStatus(errSecDuplicateItem) { try t.keychain.update(genp([kSecAttrService: "multi"]), [kSecAttrAccount: "same"]) }
        #expect(try t.keychain.count(genp([kSecAttrAccount: "same"])) == 0)
        #expect(try t.keychain.count(genp([kSecAttrService: "multi", kSecMatchLimit: kSecMatchLimitAll])) == 3)
        expectStatus(errSecDuplicateItem) { try t.keychain.update(genp([kSecAttrAccount: "x"]), [kSecAttrAccount: "y"]) }
        #expect(try t.keychain.delete(genp([kSecAttrService: "multi"])) == 3)
        #expect(try t.keychain.itemCount() == 1)
        #expect(try t.keychain.copyMatching(genp([kSecReturnData: true])) as? Data == Data("keep".utf8))
    }

    @Test func caseInsensitiveMatchingIsAnExtension() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "GitHub.com", kSecAttrAccount: "Alice", kSecValueData: Data("t".utf8)]))
        expectStatus(errSecItemNotFound, "exact by default, as Apple") {
            _ = try t.keychain.copyMatching(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice"]))
        }
        let q = genp([kSecAttrService: "github.com", kSecAttrAccount: "ALICE", kSecMatchCaseInsensitive: true, kSecReturnData: true])
        #expect(try t.keychain.copyMatching(q) as? Data == Data("t".utf8))
        #expect(try t.keychain.count(genp([kSecAttrService: "GITHUB.COM", kSecMatchCaseInsensitive: true])) == 1)
    }

    /// Security review, F5: `matches(_:ignoringCase:)` decoded bytes with `String(decoding:)`,
    /// which maps every invalid UTF-8 sequence to U+FFFD: account 0xFF matched a query for
    /// account 0xFE.
    @Test func ignoreCaseDoesNotConflateInvalidUTF8() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "svc", kSecAttrAccount: Data([0xFF]), kSecValueData: Data("victim".utf8)]))
        expectStatus(errSecItemNotFound, "a different account must not match") {
            let r = try t.keychain.copyMatching(
                genp([
                    kSecAttrService: "svc", kSecAttrAccount: Data([0xFE]),
                    kSecMatchCaseInsensitive: true, kSecReturnData: true
                ]))
            Issue.record("query for account 0xFE returned \(String(describing: (r as? Data).map { String(decoding: $0, as: UTF8.self) }))")
        }
    }

    /// kcMatchText (a kc extension): prefix and substring matching of text attributes,
    /// alone and with ignore-case; binary attributes and numbers stay exact; a kSecMatch…
    /// key, so add, update and delete refuse it.
    @Test func prefixAndSubstringMatchingIsAnExtension() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "GitHub.com", kSecAttrAccount: "alice", kSecValueData: Data("a".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "gitlab.example", kSecAttrAccount: "bob", kSecValueData: Data("b".utf8)]))
        try t.keychain.add(genp([kSecAttrService: "my-git", kSecAttrAccount: "carol", kSecAttrGeneric: Data([0xFF, 0x67]), kSecValueData: Data("c".utf8)]))
        func accounts(_ extra: [String: Any]) throws -> [String] {
            do {
                let found = try t.keychain.copyMatching(genp(extra.merging([kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true]) { a, _ in a }))
                return ((found as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount] as? String }.sorted()
            } catch let error as KeychainError where error.status == errSecItemNotFound {
                return []
            }
        }
        #expect(try accounts([kSecAttrService: "git"]) == [], "exact by default")
        #expect(try accounts([kSecAttrService: "git", kcMatchText: kcMatchTextContains]) == ["bob", "carol"])
        #expect(try accounts([kSecAttrService: "git", kcMatchText: kcMatchTextPrefix]) == ["bob"])
        #expect(try accounts([kSecAttrService: "git", kcMatchText: kcMatchTextPrefix, kSecMatchCaseInsensitive: true]) == ["alice", "bob"])
        #expect(try accounts([kSecAttrService: "GIT", kcMatchText: kcMatchTextContains, kSecMatchCaseInsensitive: true]) == ["alice", "bob", "carol"])
        #expect(try accounts([kSecAttrService: "HUB.C", kcMatchText: kcMatchTextContains]) == [], "case matters without ignore-case")
        #expect(try accounts([kSecAttrService: "github.com", kcMatchText: kcMatchTextExact, kSecMatchCaseInsensitive: true]) == ["alice"])
        #expect(try accounts([kSecAttrService: "git", kSecAttrAccount: "o", kcMatchText: kcMatchTextContains]) == ["bob", "carol"], "every text condition")
        #expect(try accounts([kSecAttrGeneric: Data([0x67]), kcMatchText: kcMatchTextContains]) == ["carol"], "bytes that are not UTF-8 compare as bytes")
        expectStatus(errSecParam, "an unknown mode") { _ = try t.keychain.copyMatching(genp([kSecAttrService: "git", kcMatchText: "regex"])) }
        expectStatus(errSecParam, "a kSecMatch… key in delete") { _ = try t.keychain.delete(genp([kSecAttrService: "git", kcMatchText: kcMatchTextContains])) }
        expectStatus(errSecParam, "a kSecMatch… key in update") {
            _ = try t.keychain.update(genp([kSecAttrService: "git", kcMatchText: kcMatchTextContains]), [kSecAttrComment: "x"])
        }
        #expect(try t.keychain.count(genp([kSecAttrService: "git", kcMatchText: kcMatchTextContains])) == 2)
        #expect(try t.keychain.count(genp([kSecAttrService: ""])) == 0)
        #expect(try t.keychain.count(genp([kSecAttrService: "", kcMatchText: kcMatchTextPrefix])) == 3, "an empty prefix is every item")
        #expect(TextMatch.occurs([1, 2], in: [1, 1, 2]) && !TextMatch.occurs([1, 2], in: [2, 1]) && TextMatch.occurs([], in: []))
    }

    @Test func matchLimitNumbersAndErrors() throws {
        let t = try TempKeychain()
        for i in 0..<5 { try t.keychain.add(genp([kSecAttrService: "n", kSecAttrAccount: "\(i)"])) }
        let three = try t.keychain.copyMatching(genp([kSecAttrService: "n", kSecMatchLimit: 3, kSecReturnAttributes: true])) as? [[String: Any]]
        #expect(three?.map { $0[kSecAttrAccount] as? String } == ["0", "1", "2"])
        expectStatus(errSecParam) { _ = try t.keychain.copyMatching(genp([kSecMatchLimit: "lots"])) }
        expectStatus(errSecParam) { _ = try t.keychain.copyMatching(genp([kSecMatchLimit: -5])) }
        #expect((try t.keychain.copyMatching(genp([kSecMatchLimit: -1])) as? [Any]) != nil, "-1 means all")
    }

    @Test func validationErrors() throws {
        let t = try TempKeychain()
        let k = t.keychain
        expectStatus(errSecParam, "no class") { try k.add([kSecAttrService: "s"]) }
        expectStatus(errSecParam, "class not a string") { try k.add([kSecClass: 5]) }
        expectStatus(errSecNoSuchClass) { try k.add([kSecClass: "apls"]) }
        expectStatus(errSecNoSuchAttr, "server is not a generic-password attribute") { try k.add(genp([kSecAttrServer: "x"])) }
        expectStatus(errSecNoSuchAttr) { _ = try k.copyMatching([kSecClass: kSecClassCertificate, kSecAttrApplicationTag: "x"]) }
        expectStatus(errSecNoSuchAttr) { try k.delete(genp([kSecAttrPort: 1])) }
        expectStatus(errSecNoSuchAttr, "unknown 4-character key") { try k.add(genp([kSecAttrService: "s", "zzzz": "x"])) }
        expectStatus(errSecParam, "unknown longer key") { try k.add(genp([kSecAttrService: "s", "persistref": Data()])) }
        expectStatus(errSecParam, "wrong value type") { try k.add(genp([kSecAttrService: Date()])) }
        expectStatus(errSecParam) { try k.add([kSecClass: kSecClassInternetPassword, kSecAttrPort: Data([1])]) }
        expectStatus(errSecParam, "kSecValueData must be Data") { try k.add(genp([kSecAttrService: "s", kSecValueData: "string"])) }
        expectStatus(errSecParam) { try k.add(genp([kSecAttrService: "s", kSecAttrAccessible: "nope"])) }
        expectStatus(errSecParam, "return keys are booleans") { _ = try k.copyMatching(genp([kSecReturnData: "yes"])) }
        expectStatus(errSecParam, "match keys are refused by add") { try k.add(genp([kSecAttrService: "s", kSecMatchLimit: kSecMatchLimitOne])) }
        expectStatus(errSecParam, "match keys are refused by delete") { try k.delete(genp([kSecMatchLimit: kSecMatchLimitAll])) }
        expectStatus(errSecParam, "match keys are refused by update") { try k.update(genp([kSecMatchLimit: kSecMatchLimitAll]), [kSecAttrLabel: "x"]) }
        expectStatus(errSecParam, "update takes no return keys") { try k.update(genp([kSecReturnData: true]), [kSecAttrLabel: "x"]) }
        expectStatus(errSecNoSuchAttr, "update cannot change the class") { try k.update(genp([:]), [kSecClass: kSecClassKey]) }
        expectStatus(errSecNoSuchAttr) { try k.update(genp([:]), [kSecAttrServer: "x"]) }
        expectStatus(errSecUnimplemented) { try k.add(genp([kSecAttrService: "s", kSecAttrAccessControl: Data()])) }
        expectStatus(errSecDataTooLarge) { try k.add(genp([kSecAttrService: "big", kSecValueData: Data(count: (16 << 20) + 1)])) }
        // Ignored keys: data-protection flag, other kSecMatch… keys in a search.
        try k.add(genp([kSecAttrService: "ok", kSecUseDataProtectionKeychain: true]))
        #expect(try k.count(genp([kSecAttrService: "ok", "m_SubjectContains": "x"])) == 1)
        #expect(try k.itemCount() == 1, "no failed call wrote anything")
    }

    @Test func errorMessages() {
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil) == "The specified item already exists in the keychain.")
        #expect(SecCopyErrorMessageString(errSecAuthFailed, nil) == "The user name or passphrase you entered is not correct.")
        #expect(SecCopyErrorMessageString(errSecParam, nil) == "One or more parameters passed to a function were not valid.")
        #expect(SecCopyErrorMessageString(-12345, nil) == "OSStatus -12345")
        #expect(exitCode(for: errSecItemNotFound) == 44)
        #expect(exitCode(for: errSecDuplicateItem) == 45)
        #expect(exitCode(for: errSecAuthFailed) == 51)
        #expect(exitCode(for: errSecInteractionNotAllowed) == 36)
    }

    @Test func lockedKeychainRefusesEverything() throws {
        let t = try TempKeychain()
        try t.keychain.add(genp([kSecAttrService: "s"]))
        t.keychain.lock()
        #expect(!t.keychain.isUnlocked)
        expectStatus(errSecInteractionNotAllowed) { _ = try t.keychain.copyMatching(genp([:])) }
        expectStatus(errSecInteractionNotAllowed) { try t.keychain.add(genp([kSecAttrService: "t"])) }
    }
}

enum Vectors {
    static func load(_ name: String) throws -> [UInt8] {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Vectors")
        return Array(try Data(contentsOf: dir.appendingPathComponent(name)))
    }
}
