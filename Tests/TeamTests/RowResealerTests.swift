import Testing
import KeychainCore
import TeamCore
@testable import TeamStore

/// `RowResealer` spreads a re-key's per-row work over threads: its answer is in the rows'
/// order and the same for any number of threads, and a failure is the first failing row's.
@Suite struct RowResealerTests {
    /// Keys of generation `g` of one keychain.
    static func keys(_ g: UInt32) throws -> KeyHierarchy {
        try KeyHierarchy(
            master: try KeyHierarchy.newMasterKey(), keychainID: Array(repeating: 7, count: 32), keyGeneration: g,
            blindKeyIDs: Schema.blindKeyIDs)
    }

    /// `n` generic-password rows sealed under `keys`, item i with service "s-i".
    static func rows(_ n: Int, under keys: KeyHierarchy) throws -> [ItemRow] {
        let codec = RowCodec(keys: keys)
        return try (0..<n).map { i in
            var row = try codec.seal(
                itemID: Sodium.randomBytes(16), itemClass: .genericPassword, rowVersion: 1,
                attributes: ["svce": .string("s-\(i)"), "acct": .string("a"), "pdmn": .string("ak")], data: nil)
            row.seq = Int64(i + 1)
            return row
        }
    }

    @Test func theAnswerIsInOrderAndTheSameForAnyNumberOfThreads() throws {
        let old = try Self.keys(1), new = try Self.keys(2)
        let rows = try Self.rows(700, under: old)
        let resealer = RowResealer(from: RowCodec(keys: old), to: RowCodec(keys: new), rowVersion: 9)
        let one = try resealer.reseal(rows[...], stripes: 1)
        let reference = RowCodec(keys: new)
        for stripes in [2, 3, 8] {
            let many = try resealer.reseal(rows[100...], stripes: stripes)
            #expect(many.map(\.row.itemID) == rows[100...].map(\.itemID))
            // Everything but the fresh nonces of the sealed columns is the same as on one thread.
            #expect(many.map(\.row.primaryKey) == one[100...].map(\.row.primaryKey))
            #expect(many.map(\.row.indexes) == one[100...].map(\.row.indexes))
        }
        for r in one {
            #expect(r.row.rowVersion == 9 && r.hash == RowHash.of(r.row))
            _ = try reference.open(r.row)   // opens and checks under the new keys
        }
    }

    @Test func theErrorIsTheFirstFailingRows() throws {
        let old = try Self.keys(1), new = try Self.keys(2)
        var rows = try Self.rows(600, under: old)
        rows[450].metadata[30] ^= 1   // fails to decrypt
        rows[130].classCode = "zzzz"   // an unknown class: fails earlier in the order
        let resealer = RowResealer(from: RowCodec(keys: old), to: RowCodec(keys: new), rowVersion: 2)
        for stripes in [1, 2, 4] {
            let e = failure { try resealer.reseal(rows[...], stripes: stripes) }
            #expect(e?.status == errSecDecode)
            #expect(e?.message.contains("unknown class") == true, "stripes \(stripes): \(e?.message ?? "no error")")
        }
    }
}
