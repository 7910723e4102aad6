import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A first open's scan of every row (`PostgresItemStore.forEachRowUnordered`, pieces of
/// `seq` claimed by two connections in one snapshot): it reads the rows `forEachRow(.all)`
/// reads, value for value, and a first open refuses every change the server makes to a row
/// or a pair, at either end of the range, and opens again once the change is undone.
@Suite struct FirstOpenScanTests {
    /// The row hashes of `rows`, sorted (the scan has no order).
    static func hashes(_ rows: [ItemRow]) -> [[UInt8]] {
        rows.map(RowHash.of).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The scan (one piece, and pieces of every size) reads what `forEachRow(.all)` reads:
    /// pairs, indexes, no data or some, every protection class, a hole in `seq`.
    @Test func theScanReadsWhatForEachRowReads() throws {
        let store = try PostgresItemStoreTests.makeStore(dsn: TestPostgres.shared.newDatabase(), keychainID: Sodium.randomBytes(32))
        var g = SplitMix64(seed: 20)
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) } }
        let pool = (0..<6).map { _ in bytes(12) }
        try store.transaction(write: true) {
            for i in 0..<40 {
                var indexes: [IndexColumn: [UInt8]] = [:]
                for c in IndexColumn.allCases where g.next() % 3 != 0 { indexes[c] = bytes(8) }
                let row = ItemRow(
                    itemID: bytes(16), classCode: ["genp", "inet", "keys"][i % 3], rowVersion: g.next() % 9, primaryKey: bytes(16),
                    indexes: indexes, pairs: pool.filter { _ in g.next() % 3 == 0 }.sorted { $0.lexicographicallyPrecedes($1) },
                    wrappedKey: bytes(72), metadata: bytes(50), data: i % 4 == 0 ? nil : bytes(60),
                    protection: i % 2 == 0 ? .whenUnlocked : .afterFirstUnlock)
                _ = try store.insert(row)
            }
            // A deletion leaves a hole in seq.
            var first: [UInt8] = []
            try store.forEachRow(.all, includeData: false) {
                first = $0.itemID; return false
            }
            try store.delete(itemID: first)
        }
        try store.transaction(write: false) {
            var expected: [ItemRow] = []
            try store.forEachRow(.all, includeData: false) {
                expected.append($0); return true
            }
            #expect(expected.count == 39)
            #expect(expected.contains { $0.pairs.count > 1 } && expected.contains { $0.data == nil }, "the rows exercise pairs and no data")
            let range = try #require(try store.seqRange())
            // One piece of every row, and pieces of every size, the rest piece included.
            for pieces in [ScanPieces(range: nil)] + [1, 2, 3, 7, 39, 4_096].map({ ScanPieces(range: range, rowsPerPiece: $0) }) {
                var all: [ItemRow] = []
                try store.forEachRowUnordered(claiming: pieces) { all.append($0) }
                #expect(Self.hashes(all) == Self.hashes(expected))
                #expect(Set(all.map { $0.pairs }) == Set(expected.map { $0.pairs }))
                #expect(pieces.claim() == nil, "every piece was claimed")
            }
            #expect(ScanPieces(range: range, rowsPerPiece: 3).count == 14, "39 values of seq (the first row deleted) in 13 ranges and the rest")
        }
    }

    /// A range no keychain fills (a server's min and max gone wild) is one piece; pieces
    /// never overflow.
    /// The snapshot name is the one value spliced into SQL (DESIGN.md: every value bound):
    /// a server's answer that is not a snapshot name never reaches the statement.
    @Test func onlyASnapshotNameIsSplicedIntoSQL() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let c = try PostgresConnection(dsn: dsn)
        try c.begin(readOnlySnapshot: true)
        let real = try #require(c.execute("SELECT pg_export_snapshot()").text(0, 0))
        c.rollback()
        #expect(TeamAuthority.snapshotName(real) == real)
        for hostile in ["00000003-0000001B-1'; DROP TABLE kc_items; --", "x", "", "0'", String(repeating: "a", count: 65), "00000003 1"] {
            #expect(TeamAuthority.snapshotName(hostile) == nil, "\(hostile)")
        }
        #expect(TeamAuthority.snapshotName(nil) == nil)
    }

    @Test func aWildRangeIsOnePiece() {
        #expect(ScanPieces(range: Int64.min...Int64.max).count == 1)
        let edge = ScanPieces(range: (Int64.max - 10)...Int64.max, rowsPerPiece: 3)
        var n = 0
        while edge.claim() != nil { n += 1 }
        #expect(n == edge.count && n == 4)
    }

    /// A team of 12 items, one with Secret Service pairs at each end of the seq range, and
    /// a copy of its rows to undo an attack with.
    static func team() throws -> (team: TeamFixture, server: PostgresConnection, low: Int64, high: Int64) {
        let team = try TeamFixture()
        let k = team.admin.keychain
        try k.add(genp([kSecAttrService: "pairs-low", kcAttrSecretServiceAttributes: ["xdg:schema": "org.test", "user": "a"], kSecValueData: Data("l".utf8)]))
        for i in 0..<10 { try k.add(genp([kSecAttrService: "item-\(i)", kSecValueData: Data("\(i)".utf8)])) }
        try k.add(
            genp([
                kSecAttrService: "pairs-high", kcAttrSecretServiceAttributes: ["xdg:schema": "org.test", "user": "b", "host": "h"],
                kSecValueData: Data("h".utf8)
            ]))
        let server = try team.server()
        _ = try server.execute("CREATE TABLE saved_items AS TABLE kc_items")
        _ = try server.execute("CREATE TABLE saved_pairs AS TABLE kc_pairs")
        let r = try server.execute("SELECT min(seq), max(seq), (SELECT count(*) FROM kc_pairs) FROM kc_items")
        let low = try #require(r.int64(0, 0)), high = try #require(r.int64(0, 1))
        #expect(r.int64(0, 2) == 5, "the two items have 2 and 3 pairs")
        return (team, server, low, high)
    }

    /// Puts the saved rows and pairs back.
    static func restore(_ server: PostgresConnection) throws {
        _ = try server.execute("DELETE FROM kc_pairs")
        _ = try server.execute("DELETE FROM kc_items")
        _ = try server.execute("INSERT INTO kc_items OVERRIDING SYSTEM VALUE SELECT * FROM saved_items")
        _ = try server.execute("INSERT INTO kc_pairs SELECT * FROM saved_pairs")
    }

    /// A first open as the admin on a fresh device (no checkpoint: the whole scan).
    static func firstOpen(_ team: TeamFixture) throws -> TeamFixture.Member {
        try team.reopen(team.admin.keys, as: "fresh-" + UUID().uuidString)
    }

    /// Every change to a row or a pair, at either end of the `seq` range, fails a first
    /// open (errSecDecode); undone, the keychain opens again.
    @Test func everyChangeToARowOrAPairFailsAFirstOpen() throws {
        let (team, server, low, high) = try Self.team()
        #expect(try Self.firstOpen(team).authority.itemCount == 12)
        let item = "(SELECT item_id FROM kc_items WHERE seq = $1)"
        var attacks: [(String, [(String, [PGValue?])])] = []
        for seq in [low, high] {
            let s: [PGValue?] = [.int64(seq)]
            let other: [PGValue?] = [.int64(seq == low ? low + 1 : high - 1)]
            attacks += [
                ("a row edited", [("UPDATE kc_items SET metadata = set_byte(metadata, 20, get_byte(metadata, 20) # 1) WHERE seq = $1", s)]),
                ("a row's version edited", [("UPDATE kc_items SET row_version = row_version + 1 WHERE seq = $1", s)]),
                ("a row deleted", [("DELETE FROM kc_items WHERE seq = $1", s)]),
                (
                    "a pair edited",
                    [
                        (
                            "UPDATE kc_pairs SET fp = set_byte(fp, 0, get_byte(fp, 0) # 1) WHERE item_id = \(item) AND fp = (SELECT fp FROM kc_pairs WHERE item_id = \(item) ORDER BY fp LIMIT 1)",
                            s
                        )
                    ]
                ),
                (
                    "a pair added",
                    [("INSERT INTO kc_pairs (keychain_id, fp, item_id) SELECT keychain_id, '\\x00112233'::bytea, item_id FROM kc_items WHERE seq = $1", s)]
                ),
                (
                    "a pair removed",
                    [("DELETE FROM kc_pairs WHERE item_id = \(item) AND fp = (SELECT fp FROM kc_pairs WHERE item_id = \(item) ORDER BY fp DESC LIMIT 1)", s)]
                ),
                (
                    "a pair added to an item without",
                    [("INSERT INTO kc_pairs (keychain_id, fp, item_id) SELECT keychain_id, '\\x00112233'::bytea, item_id FROM kc_items WHERE seq = $1", other)]
                )
            ]
        }
        attacks += [
            // Two rows, the first and the last, swap their sealed columns.
            (
                "two rows swapped",
                [
                    (
                        "UPDATE kc_items t SET wrapped_key = o.wrapped_key, metadata = o.metadata FROM kc_items o WHERE (t.seq, o.seq) IN (($1, $2), ($2, $1))",
                        [.int64(low), .int64(high)]
                    )
                ]
            ),
            // Two rows swap their places (seq).
            (
                "two places swapped",
                [
                    ("UPDATE kc_items SET seq = -1 WHERE seq = $1", [.int64(low + 1)]),
                    ("UPDATE kc_items SET seq = $1 WHERE seq = $2", [.int64(low + 1), .int64(high - 1)]),
                    ("UPDATE kc_items SET seq = $1 WHERE seq = -1", [.int64(high - 1)])
                ]
            )
        ]
        // A place can only be swapped in a column that is no longer an identity.
        _ = try server.execute("ALTER TABLE kc_items ALTER COLUMN seq DROP IDENTITY")
        for (what, statements) in attacks {
            for (sql, params) in statements { _ = try server.execute(sql, params) }
            let e = failure { try Self.firstOpen(team) }
            #expect(e?.status == errSecDecode, "\(what): \(e?.message ?? "opened")")
            try Self.restore(server)
            #expect(status { try Self.firstOpen(team) } == errSecSuccess, "\(what): undone, it opens again")
        }
    }

    /// The second connection scans: it claims pieces as soon as it has imported the
    /// snapshot, while the first one walks the log (one that finds every piece taken is
    /// not waited for, so which of the two scans is a race: a few opens show both).
    @Test func theSecondConnectionScans() throws {
        let (team, _, _, _) = try Self.team()
        var connections: Set<Int> = []
        for _ in 0..<20 where !connections.contains(2) {
            let opened = try Self.firstOpen(team)
            #expect(opened.authority.itemCount == 12)
            connections.insert(opened.authority.lastScanConnections)
        }
        #expect(connections.contains(2), "\(connections)")
    }

    /// A version of a row replayed (an older version's columns put back) fails a first open.
    @Test func aReplayedRowFailsAFirstOpen() throws {
        let (team, server, _, high) = try Self.team()
        let old = try server.execute("SELECT row_version, wrapped_key, metadata, data FROM kc_items WHERE seq = $1", [.int64(high)])
        try team.admin.keychain.update(genp([kSecAttrService: "pairs-high"]), [kSecValueData: Data("h2".utf8)])
        #expect(status { try Self.firstOpen(team) } == errSecSuccess)
        _ = try server.execute(
            "UPDATE kc_items SET row_version = $1, wrapped_key = $2, metadata = $3, data = $4 WHERE seq = $5",
            [.int64(old.int64(0, 0) ?? 0), .bytes(old.bytes(0, 1) ?? []), .bytes(old.bytes(0, 2) ?? []), .bytes(old.bytes(0, 3) ?? []), .int64(high)])
        let e = failure { try Self.firstOpen(team) }
        #expect(e?.status == errSecDecode)
        #expect(e?.message.contains("edited, replayed or swapped") == true)
    }

    /// A row copied under another seq (the keys dropped), with a row deleted to keep the
    /// count, is refused; so is a row whose seq is NULL, which no range piece holds: the
    /// last piece, the rest, does.
    @Test func aRowInBothPartsOrInNeitherFailsAFirstOpen() throws {
        let (team, server, low, high) = try Self.team()
        _ = try server.execute("ALTER TABLE kc_items DROP CONSTRAINT kc_items_pkey CASCADE")
        _ = try server.execute("ALTER TABLE kc_items DROP CONSTRAINT kc_items_keychain_id_pk_key")
        _ = try server.execute("ALTER TABLE kc_items ALTER COLUMN seq DROP IDENTITY")
        _ = try server.execute("DROP INDEX kc_items_seq")
        _ = try server.execute("INSERT INTO kc_items SELECT * FROM kc_items WHERE seq = $1", [.int64(low + 2)])
        _ = try server.execute(
            "UPDATE kc_items SET seq = $1 WHERE seq = $2 AND ctid = (SELECT max(ctid) FROM kc_items WHERE seq = $2)", [.int64(high + 1), .int64(low + 2)])
        _ = try server.execute("DELETE FROM kc_items WHERE seq = $1", [.int64(high - 2)])
        let twice = failure { try Self.firstOpen(team) }
        #expect(twice?.status == errSecDecode)
        #expect(twice?.message.contains("two rows have one item id") == true, "\(twice?.message ?? "opened")")
        try Self.restore(server)
        #expect(status { try Self.firstOpen(team) } == errSecSuccess)
        _ = try server.execute("ALTER TABLE kc_items ALTER COLUMN seq DROP NOT NULL")
        _ = try server.execute("INSERT INTO kc_items SELECT * FROM kc_items WHERE seq = $1", [.int64(high)])
        _ = try server.execute(
            "UPDATE kc_items SET seq = NULL, item_id = $1 WHERE seq = $2 AND ctid = (SELECT max(ctid) FROM kc_items WHERE seq = $2)",
            [.bytes(Sodium.randomBytes(16)), .int64(high)])
        let hidden = failure { try Self.firstOpen(team) }
        #expect(hidden?.status == errSecDecode)
        #expect(hidden?.message.contains("malformed") == true, "\(hidden?.message ?? "opened")")
    }
}
