import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// User presence in KeychainCore (issue 18): the access-control flags an item may carry,
/// and what a read of its secret needs (a proof: the keychain password, checked again),
/// with kSecUseAuthenticationUI's Allow, Fail and Skip.
@Suite struct UserPresenceCoreTests {
    /// A keychain with one protected item ("bank") and one plain item ("news").
    static func keychain() throws -> TempKeychain {
        let t = try TempKeychain()
        try t.keychain.add(
            genp([
                kSecAttrService: "bank", kSecAttrAccount: "me", kcAttrAccessControlFlags: 1,
                kSecValueData: Data("pin-4711".utf8)
            ]))
        try t.keychain.add(genp([kSecAttrService: "news", kSecAttrAccount: "me", kSecValueData: Data("plain".utf8)]))
        return t
    }

    static func proof(_ password: String = TempKeychain.password) throws -> UserPresence {
        UserPresence(password: try secure(password))
    }

    @Test func theSecretNeedsAProofAndTheAttributesDoNot() throws {
        let t = try Self.keychain()
        let data = genp([kSecAttrService: "bank", kSecReturnData: true])
        #expect(throws: UserPresenceRequired(item: "\"bank\" (account \"me\")")) { try t.keychain.copyMatching(data) }
        let attributes = try t.keychain.copyMatching(genp([kSecAttrService: "bank", kSecReturnAttributes: true])) as? [String: Any]
        #expect(attributes?[kcAttrAccessControlFlags] as? Int == 1, "the flags come back with the attributes")
        #expect(try t.keychain.copyMatching(data, presence: Self.proof()) as? Data == Data("pin-4711".utf8))
        expectStatus(errSecAuthFailed, "a wrong password is no proof") {
            _ = try t.keychain.copyMatching(data, presence: Self.proof("wrong"))
        }
        // The plain item needs nothing.
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "news", kSecReturnData: true])) as? Data == Data("plain".utf8))
    }

    /// Issue 29, item 14: the old password, with the password record of a copy made before
    /// a password change spliced back in (the master key kept), is no proof of presence: the
    /// check itself opens only the record the header MAC covers.
    @Test func anOldPasswordRecordSplicedInIsNoProof() throws {
        let t = try Self.keychain()
        try t.sql("ATTACH '\(t.directory)/old.db' AS o; CREATE TABLE o.record AS SELECT * FROM main.kc_keychain;")
        try t.keychain.changePassword(to: try secure("new password"))
        try t.sql("ATTACH '\(t.directory)/old.db' AS o; DELETE FROM main.kc_keychain; INSERT INTO main.kc_keychain SELECT * FROM o.record;")
        expectStatus(errSecDecode, "the spliced record fails the header MAC") {
            try t.keychain.checkPresenceProof(try secure(TempKeychain.password))
        }
        expectStatus(errSecDecode) {
            _ = try t.keychain.copyMatching(genp([kSecAttrService: "bank", kSecReturnData: true]), presence: Self.proof())
        }
    }

    @Test func failRefusesWithoutAskingAndSkipLeavesTheItemOut() throws {
        let t = try Self.keychain()
        var all = genp([kSecAttrAccount: "me", kSecReturnData: true, kSecReturnAttributes: true, kSecMatchLimit: kSecMatchLimitAll])
        all[kSecUseAuthenticationUI] = kSecUseAuthenticationUIFail
        expectStatus(errSecInteractionNotAllowed) { _ = try t.keychain.copyMatching(all) }
        var old = all
        old[kSecUseAuthenticationUI] = nil
        old[kSecUseNoAuthenticationUI] = true
        expectStatus(errSecInteractionNotAllowed, "kSecUseNoAuthenticationUI is Fail") { _ = try t.keychain.copyMatching(old) }
        all[kSecUseAuthenticationUI] = kSecUseAuthenticationUISkip
        let items = try t.keychain.copyMatching(all) as? [[String: Any]] ?? []
        #expect(items.map { $0[kSecAttrService] as? String } == ["news"])
        // Skip with only the protected item matching: nothing found.
        var one = genp([kSecAttrService: "bank", kSecReturnData: true, kSecUseAuthenticationUI: kSecUseAuthenticationUISkip])
        expectStatus(errSecItemNotFound) { _ = try t.keychain.copyMatching(one) }
        one[kSecReturnData] = nil
        one[kSecReturnAttributes] = true
        #expect(try t.keychain.copyMatching(one) != nil, "attributes only: the item is not skipped")
        // Skip belongs to SecItemCopyMatching only; a bad value is errSecParam.
        expectStatus(errSecParam) { _ = try t.keychain.delete(genp([kSecAttrService: "x", kSecUseAuthenticationUI: kSecUseAuthenticationUISkip])) }
        expectStatus(errSecParam) { _ = try t.keychain.copyMatching(genp([kSecUseAuthenticationUI: "u_AuthUIX"])) }
    }

    @Test func oneProofCoversABatchAndUpdatesNeedOne() throws {
        let t = try Self.keychain()
        try t.keychain.add(
            genp([
                kSecAttrService: "safe", kSecAttrAccount: "me", kcAttrAccessControlFlags: 2 | 16384,
                kSecValueData: Data("combo".utf8)
            ]))
        let batch = KeychainRequest.copyMany(BatchRequest(queries: ["bank", "safe", "news"].map { genp([kSecAttrService: $0, kSecReturnData: true]) }))
        #expect(throws: UserPresenceRequired.self, "the whole batch waits for one proof") { _ = try batch.perform(on: t.keychain) }
        guard case .results(let results) = try batch.perform(on: t.keychain, presence: Self.proof()) else {
            Issue.record("expected results"); return
        }
        #expect(results.map { (try? $0.get()) as? Data } == ["pin-4711", "combo", "plain"].map { Data($0.utf8) })
        // Without a proof, the flags cannot be dropped (which would give the secret away).
        #expect(throws: UserPresenceRequired.self) { try t.keychain.update(genp([kSecAttrService: "bank"]), [kcAttrAccessControlFlags: 0]) }
        #expect(try t.keychain.update(genp([kSecAttrService: "bank"]), [kcAttrAccessControlFlags: 0], presence: Self.proof()) == 1)
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "bank", kSecReturnData: true])) as? Data == Data("pin-4711".utf8))
        // An import cannot compare its secret with a protected item's ("unchanged" would tell).
        let item = ImportItem(
            query: genp([
                kSecAttrService: "safe", kSecAttrAccount: "me", kcAttrAccessControlFlags: 2 | 16384,
                kSecValueData: Data("guess".utf8)
            ]), source: "guess")
        #expect(throws: UserPresenceRequired.self) { _ = try t.keychain.importItems([item], dryRun: true) }
    }

    /// Issue 29, item 10: the signal names every protected item the operation would release
    /// (an export, a batch, an update, an import), so one prompt can name the whole batch;
    /// a proof given for the items named releases no other.
    @Test func theSignalNamesEveryItemItReleases() throws {
        let t = try Self.keychain()
        try t.keychain.add(genp([kSecAttrService: "safe", kSecAttrAccount: "me", kcAttrAccessControlFlags: 1, kSecValueData: Data("combo".utf8)]))
        let names = ["\"bank\" (account \"me\")", "\"safe\" (account \"me\")"]
        func named(_ body: () throws -> Void) -> [String] {
            do { try body() } catch let required as UserPresenceRequired { return required.items.sorted() } catch { Issue.record("\(error)") }
            return []
        }
        let all = genp([kSecAttrAccount: "me", kSecReturnData: true, kSecMatchLimit: kSecMatchLimitAll])
        #expect(named { _ = try t.keychain.copyMatching(all) } == names, "an export names both")
        var one = all
        one[kSecMatchLimit] = nil
        #expect(named { _ = try t.keychain.copyMatching(one) }.count == 1, "a search for one names only what it would return")
        let batch = KeychainRequest.copyMany(BatchRequest(queries: ["bank", "news", "safe"].map { genp([kSecAttrService: $0, kSecReturnData: true]) }))
        #expect(named { _ = try batch.perform(on: t.keychain) } == names, "a batch names every query's")
        #expect(named { _ = try t.keychain.update(genp([kSecAttrAccount: "me"]), [kSecAttrComment: "x"]) } == names)
        let guesses = ["bank", "safe"].map {
            ImportItem(query: genp([kSecAttrService: $0, kSecAttrAccount: "me", kSecValueData: Data("guess".utf8)]), source: $0)
        }
        #expect(named { _ = try t.keychain.importItems(guesses, dryRun: true) } == names)
        // A proof given after a prompt that named only "bank" does not release "safe".
        let forBank = UserPresence(password: try secure(TempKeychain.password), expecting: [names[0]])
        expectStatus(errSecAuthFailed, "an item the prompt did not name") { _ = try t.keychain.copyMatching(all, presence: forBank) }
        let forBoth = UserPresence(password: try secure(TempKeychain.password), expecting: names)
        #expect((try t.keychain.copyMatching(all, presence: forBoth) as? [Data])?.count == 3)
    }

    @Test func flagsAreCheckedOnAddAndUpdate() throws {
        let t = try TempKeychain()
        var q = genp([kSecAttrService: "s", kSecValueData: Data("x".utf8)])
        for (flags, status) in [(1 << 30, errSecUnimplemented), (Int(1) << 31, errSecUnimplemented), (1 << 2, errSecParam), (-1, errSecParam)] {
            q[kcAttrAccessControlFlags] = flags
            expectStatus(status, "flags \(flags)") { _ = try t.keychain.add(q) }
        }
        // Every flag Apple defines for a person maps onto presence; .or and .and are accepted.
        for (n, flags) in [1, 2, 8, 16, 32, 2 | 16 | 16384, 1 | 32768].enumerated() {
            try t.keychain.add(genp([kSecAttrService: "f\(n)", kcAttrAccessControlFlags: flags, kSecValueData: Data("x".utf8)]))
            #expect(throws: UserPresenceRequired.self, "flags \(flags)") {
                try t.keychain.copyMatching(genp([kSecAttrService: "f\(n)", kSecReturnData: true]))
            }
        }
        // Only .or: no constraint, no proof needed.
        try t.keychain.add(genp([kSecAttrService: "or", kcAttrAccessControlFlags: 16384, kSecValueData: Data("x".utf8)]))
        #expect(try t.keychain.copyMatching(genp([kSecAttrService: "or", kSecReturnData: true])) as? Data == Data("x".utf8))
        // Synchronizable and constrained: errSecParam, as Apple.
        expectStatus(errSecParam) {
            _ = try t.keychain.add(genp([kSecAttrService: "sync", kSecAttrSynchronizable: true, kcAttrAccessControlFlags: 1, kSecValueData: Data("x".utf8)]))
        }
        expectStatus(errSecUnimplemented) { _ = try t.keychain.update(genp([kSecAttrService: "or"]), [kcAttrAccessControlFlags: 1 << 30]) }
    }

    @Test func aProofFromAnotherKeychainOrAnOldPasswordIsRefused() throws {
        let t = try Self.keychain()
        let data = genp([kSecAttrService: "bank", kSecReturnData: true])
        // After a password change in another process, the current password is the proof.
        let other = try t.reopen()
        try other.changePassword(to: try secure("new password"))
        expectStatus(errSecAuthFailed) { _ = try t.keychain.copyMatching(data, presence: Self.proof()) }
        #expect(try t.keychain.copyMatching(data, presence: Self.proof("new password")) as? Data == Data("pin-4711".utf8))
    }
}
