import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// The `ItemStore` protocol is the seam below the keychain: a keychain opened on a store
/// that is not `SQLiteItemStore` (here a decorator over the real SQLite store) works the
/// same, and a decorator that plays a hostile store (a server answering old or missing
/// rows) is caught by the layer above, whatever store it is.
@Suite struct StoreSeamTests {
    private static var query: [String: Any] { [kSecClass: kSecClassGenericPassword, kSecAttrService: "seam", kSecAttrAccount: "me"] }

    private static func open(_ temp: TempKeychain, _ store: HostileStore) throws -> Keychain {
        try Keychain.open(store, path: temp.path, password: try secure(TempKeychain.password))
    }

    @Test func aKeychainWorksOnAnotherStoreThroughTheProtocol() throws {
        let temp = try TempKeychain()
        let store = HostileStore(try SQLiteItemStore(openingExisting: temp.path))
        let keychain = try Self.open(temp, store)
        try keychain.add(Self.query.merging([kSecValueData: Data("one".utf8)]) { $1 })
        #expect(try keychain.update(Self.query, [kSecValueData: Data("two".utf8)]) == 1)
        #expect(try keychain.copyMatching(Self.query.merging([kSecReturnData: true]) { $1 }) as? Data == Data("two".utf8))
        #expect(try keychain.count([kSecClass: kSecClassGenericPassword]) == 1)
        #expect(try keychain.check() == 1)
        #expect(store.rowsServed > 0, "the keychain read its rows through the decorator")
        // What went through the seam is in the real file, for a keychain opened the usual way.
        let plain = try temp.reopen()
        #expect(try plain.copyMatching(Self.query.merging([kSecReturnData: true]) { $1 }) as? Data == Data("two".utf8))
        #expect(try keychain.delete(Self.query) == 1)
        #expect(throws: KeychainError(errSecItemNotFound)) { try plain.copyMatching(Self.query) }
    }

    @Test func aStoreThatServesAnOldVersionOfARowIsCaught() throws {
        let temp = try TempKeychain()
        let store = HostileStore(try SQLiteItemStore(openingExisting: temp.path))
        let keychain = try Self.open(temp, store)
        try keychain.add(Self.query.merging([kSecValueData: Data("old secret".utf8)]) { $1 })
        _ = try keychain.copyMatching(Self.query)
        let old = try #require(store.lastRow)
        try keychain.update(Self.query, [kSecValueData: Data("new secret".utf8)])
        store.replay = old   // the "server" answers the row as it was before the update
        let error = try #require(throws: KeychainError.self) {
            try keychain.copyMatching(Self.query.merging([kSecReturnData: true]) { $1 })
        }
        #expect(error.status == errSecDecode)
    }

    @Test func aStoreThatHidesARowFromTheScanIsRefusedAtOpen() throws {
        let temp = try TempKeychain()
        try temp.keychain.add(Self.query.merging([kSecValueData: Data("s".utf8)]) { $1 })
        try temp.keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: "other", kSecValueData: Data("t".utf8)])
        let store = HostileStore(try SQLiteItemStore(openingExisting: temp.path))
        store.hideFirstRow = true
        let error = try #require(throws: KeychainError.self) { try Self.open(temp, store) }
        #expect(error.status == errSecDecode)
    }
}

/// An `ItemStore` that forwards to a real one and, when told to, lies as a hostile storage
/// server would: it answers an old version of a row, or leaves a row out of every listing.
final class HostileStore: ItemStore {
    private let inner: any ItemStore
    /// Served in place of the row with the same item id.
    var replay: ItemRow?
    /// Leaves the first row out of every listing.
    var hideFirstRow = false
    /// The last row the keychain was given, and how many it was given.
    private(set) var lastRow: ItemRow?
    private(set) var rowsServed = 0

    init(_ inner: any ItemStore) { self.inner = inner }

    func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T { try inner.transaction(write: write, body) }
    func readKeychainRecord() throws -> KeychainRecord { try inner.readKeychainRecord() }
    func writeKeychainRecord(_ record: KeychainRecord) throws { try inner.writeKeychainRecord(record) }
    func readState() throws -> StateRecord { try inner.readState() }
    func writeState(_ state: StateRecord) throws { try inner.writeState(state) }

    func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {
        var first = true
        try inner.forEachRow(lookup, includeData: includeData) { row in
            defer { first = false }
            if hideFirstRow && first { return true }
            var served = row
            if let replay, replay.itemID == row.itemID { served = replay }
            lastRow = served
            rowsServed += 1
            return try body(served)
        }
    }

    func insert(_ row: ItemRow) throws -> Int64 { try inner.insert(row) }
    func replace(_ row: ItemRow) throws { try inner.replace(row) }
    func delete(itemID: [UInt8]) throws { try inner.delete(itemID: itemID) }
    func changeStamp() throws -> ChangeStamp { try inner.changeStamp() }
    func isStillTheOpenedFile() -> Bool { inner.isStillTheOpenedFile() }
    func forEachIndexEntry(_ index: StoreIndex, _ body: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        try inner.forEachIndexEntry(index, body)
    }
    func structuralProblems() throws -> String? { try inner.structuralProblems() }
    func compactLog() throws { try inner.compactLog() }
    func copy(toNewFile path: String) throws -> any ItemStore { try inner.copy(toNewFile: path) }
    func freshConnection() throws -> (any ItemStore)? {
        guard let fresh = try inner.freshConnection() else { return nil }
        let other = HostileStore(fresh)
        other.replay = replay
        other.hideFirstRow = hideFirstRow
        return other
    }
    func withBulkCache<T>(_ body: () throws -> T) throws -> T { try inner.withBulkCache(body) }
}
