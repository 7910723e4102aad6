import Foundation
import Testing
@testable import KeychainCore

/// `Keychain.addAll`: many items in one transaction, all or none.
@Suite struct BatchAddTests {
    private func item(_ i: Int, service: String = "svc") -> [String: Any] {
        [
            kSecClass: kSecClassGenericPassword, kSecAttrService: "\(service)-\(i)", kSecAttrAccount: "acct",
            kSecValueData: Data("secret-\(i)".utf8)
        ]
    }

    @Test func addsEveryItemReadableAndCounted() throws {
        let temp = try TempKeychain()
        let added = try temp.keychain.addAll((0..<500).lazy.map { self.item($0) })
        #expect(added == 500)
        #expect(try temp.keychain.itemCount() == 500)
        // The header's count and accumulator agree with the rows, from a fresh open too.
        try temp.keychain.verify()
        let reopened = try temp.reopen()
        try reopened.verify()
        for i in [0, 250, 499] {
            let data =
                try reopened.copyMatching([
                    kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)",
                    kSecReturnData: true
                ]) as? Data
            #expect(data == Data("secret-\(i)".utf8))
        }
    }

    @Test func aFailureAddsNothingAndNamesTheItem() throws {
        let temp = try TempKeychain()
        try temp.keychain.add(item(7, service: "old"))
        // Item 4 repeats item 2's primary key.
        let batch = [item(1), item(2), item(3), item(2), item(5)]
        let error = #expect(throws: KeychainError.self) { try temp.keychain.addAll(batch) }
        #expect(error?.status == errSecDuplicateItem)
        #expect(error?.message.hasPrefix("item 4: ") == true)
        #expect(try temp.keychain.itemCount() == 1)
        try temp.keychain.verify()
        #expect(throws: KeychainError.self) {
            try temp.keychain.copyMatching([kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-1"])
        }

        // A bad query part-way (an attribute the class does not have) also adds nothing.
        var bad = item(9)
        bad[kSecAttrServer] = "example.com"
        let badError = #expect(throws: KeychainError.self) { try temp.keychain.addAll([item(8), bad]) }
        #expect(badError?.message.hasPrefix("item 2: ") == true)
        #expect(try temp.keychain.itemCount() == 1)
    }

    @Test func anEmptyBatchChangesNothing() throws {
        let temp = try TempKeychain()
        #expect(try temp.keychain.addAll([]) == 0)
        #expect(try temp.keychain.itemCount() == 0)
        try temp.keychain.verify()
    }
}
