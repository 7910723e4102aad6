// TEMPORARY (never committed): the pg helper's API, so the lead's code compiles until the merge.
import KeychainCore
package enum PGValue: Sendable { case bytes([UInt8]); case text(String); case int64(Int64) }
package final class PostgresConnection {
    package let dsn: String
    package init(dsn: String, connectTimeout: Int = 10) throws { self.dsn = dsn }
    package var isBroken: Bool { false }
    package func reconnect() throws {}
    package static func checkTransport(dsn: String, insecureAllowed: Bool) throws {}
}
package struct TeamHead { package var generation: UInt64; package var keyGeneration: UInt32; package var head: [UInt8]; package var schemaVersion: UInt32; package var minWriterVersion: UInt32 }
package enum PostgresSchema { package static func install(_ c: PostgresConnection) throws {}; package static func check(_ c: PostgresConnection) throws {} }
package final class TeamTables {
    package init(connection: PostgresConnection, keychainID: [UInt8]) {}
    package func createKeychain(genesis: [UInt8], firstEntry: [UInt8], head: [UInt8]) throws {}
    package func head() throws -> TeamHead? { nil }
    package func genesis() throws -> [UInt8]? { nil }
    package func claim(expectedGeneration: UInt64) throws -> Bool { false }
    package func lockForAdmin() throws -> TeamHead? { nil }
    package func append(generation: UInt64, kind: Int16, entry: [UInt8], newHead: [UInt8], keyGeneration: UInt32?) throws {}
    package func entries(after: UInt64, kind: Int16? = nil) throws -> [(generation: UInt64, entry: [UInt8])] { [] }
    package func entry(at: UInt64) throws -> [UInt8]? { nil }
    package func members() throws -> [(memberID: [UInt8], record: [UInt8])] { [] }
    package func putMember(_ memberID: [UInt8], record: [UInt8]) throws {}
    package func deleteMember(_ memberID: [UInt8]) throws {}
    package func putRequest(fingerprint: String, request: [UInt8]) throws {}
    package func request(fingerprint: String) throws -> [UInt8]? { nil }
    package func deleteRequest(fingerprint: String) throws {}
    package func putWrap(keyGeneration: UInt32, memberID: [UInt8], sealed: [UInt8], signature: [UInt8]) throws {}
    package func wrap(keyGeneration: UInt32, memberID: [UInt8]) throws -> (sealed: [UInt8], signature: [UInt8])? { nil }
    package func deleteWraps(keyGeneration: UInt32) throws {}
}
package final class PostgresItemStore: ItemStore {
    package let connection: PostgresConnection
    package init(connection: PostgresConnection, keychainID: [UInt8], label: String) { self.connection = connection }
    package func transaction<T>(write: Bool, _ body: () throws -> T) throws -> T { try body() }
    package func readKeychainRecord() throws -> KeychainRecord { throw KeychainError(errSecUnimplemented) }
    package func writeKeychainRecord(_ record: KeychainRecord) throws {}
    package func readState() throws -> StateRecord { throw KeychainError(errSecUnimplemented) }
    package func writeState(_ state: StateRecord) throws {}
    package func forEachRow(_ lookup: RowLookup, includeData: Bool, _ body: (ItemRow) throws -> Bool) throws {}
    package func insert(_ row: ItemRow) throws -> Int64 { 0 }
    package func replace(_ row: ItemRow) throws {}
    package func delete(itemID: [UInt8]) throws {}
    package func changeStamp() throws -> ChangeStamp { throw KeychainError(errSecUnimplemented) }
    package func isStillTheOpenedFile() -> Bool { true }
    package func forEachIndexEntry(_ index: StoreIndex, _ body: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {}
    package func structuralProblems() throws -> String? { nil }
    package func compactLog() throws {}
    package func copy(toNewFile path: String) throws -> any ItemStore { throw KeychainError(errSecUnimplemented) }
    package func freshConnection() throws -> (any ItemStore)? { nil }
    package func withBulkCache<T>(_ body: () throws -> T) throws -> T { try body() }
}
