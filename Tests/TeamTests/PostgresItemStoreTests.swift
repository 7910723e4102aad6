import Foundation
import Synchronization
import Testing
import KeychainCore
import KCTestSupport
import TeamStore

/// `PostgresItemStore` answers as `SQLiteItemStore` does: one scenario of inserts,
/// replaces, deletes and every `RowLookup`, run on both, gives the same transcript (rows,
/// order, errors); seq values differ between the engines (SQLite reuses a freed last rowid,
/// PostgreSQL's identity never does), so the transcript holds their order, not their values.
@Suite struct PostgresItemStoreTests {
    /// A team keychain's store in a fresh database of the test cluster.
    static func makeStore(dsn: String, keychainID: [UInt8]) throws -> PostgresItemStore {
        let c = try PostgresConnection(dsn: dsn)
        try PostgresSchema.install(c)
        try TeamTables(connection: c, keychainID: keychainID).createKeychain(genesis: [1], firstEntry: [2], head: [3])
        return PostgresItemStore(connection: c, keychainID: keychainID, label: "team:test")
    }

    static func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    /// A row as the transcript shows it: every field but seq.
    static func describe(_ r: ItemRow) -> String {
        let idx = IndexColumn.allCases.compactMap { c in r.indexes[c].map { "\(c.rawValue)=\(hex($0))" } }.joined(separator: ",")
        return "\(hex(r.itemID)) \(r.classCode) v\(r.rowVersion) pk=\(hex(r.primaryKey)) [\(idx)] pairs=\(r.pairs.map(hex)) "
            + "w=\(hex(r.wrappedKey)) m=\(hex(r.metadata)) d=\(r.data.map(hex) ?? "nil") p=\(r.protection.rawValue)"
    }

    /// The outcome of `body` for the transcript: its answer or the status it threw.
    static func outcome(_ body: () throws -> String) -> String {
        do { return try body() } catch let e as KeychainError { return "error \(e.status)" } catch { return "error \(error)" }
    }

    /// Every row `lookup` answers, in order, after checking seq increases.
    static func answer(_ store: any ItemStore, _ lookup: RowLookup, data: Bool = true, limit: Int = .max) -> String {
        outcome {
            var out: [String] = [], last = Int64.min, n = 0
            try store.transaction(write: false) {
                try store.forEachRow(lookup, includeData: data) { row in
                    guard row.seq > last else { throw KeychainError(errSecInternalError, "rows out of seq order") }
                    last = row.seq
                    out.append(describe(row))
                    n += 1
                    return n < limit
                }
            }
            return out.joined(separator: "\n")
        }
    }

    /// The scenario, on `store`; answers its transcript.
    static func scenario(_ store: any ItemStore, seed: UInt64) -> [String] {
        var g = SplitMix64(seed: seed)
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) } }
        let classes = ["genp", "inet", "keys"]
        let values = (0..<3).map { _ in bytes(8) }
        let pairPool = (0..<5).map { _ in bytes(12) }.sorted { $0.lexicographicallyPrecedes($1) }
        func makeRow() -> ItemRow {
            var indexes: [IndexColumn: [UInt8]] = [:]
            for c in IndexColumn.allCases where g.next() % 3 != 0 { indexes[c] = values[Int(g.next() % 3)] }
            let pairs = pairPool.filter { _ in g.next() % 2 == 0 }
            return ItemRow(
                itemID: bytes(16), classCode: classes[Int(g.next() % 3)], rowVersion: g.next() % 5, primaryKey: bytes(16),
                indexes: indexes, pairs: pairs, wrappedKey: bytes(72), metadata: bytes(Int(g.next() % 40) + 40),
                data: g.next() % 4 == 0 ? nil : bytes(Int(g.next() % 60) + 41),
                protection: g.next() % 2 == 0 ? .whenUnlocked : .afterFirstUnlock)
        }
        var rows = (0..<30).map { _ in makeRow() }
        var t: [String] = []
        var seqs: [String: Int64] = [:]

        // Inserts in one transaction, a duplicate among them that leaves the transaction usable.
        t.append(
            outcome {
                try store.transaction(write: true) {
                    for i in 0..<20 { seqs[hex(rows[i].itemID)] = try store.insert(rows[i]) }
                    var dup = makeRow()
                    dup.primaryKey = rows[3].primaryKey
                    let d = outcome { "\(try store.insert(dup))" }
                    var sameID = makeRow()
                    sameID.itemID = rows[4].itemID
                    let e = outcome { "\(try store.insert(sameID))" }
                    for i in 20..<25 { seqs[hex(rows[i].itemID)] = try store.insert(rows[i]) }
                    return "dup pk: \(d); dup id: \(e)"
                }
            })
        // The seq insert answered is the row's seq.
        t.append(
            outcome {
                var mismatches = 0
                try store.forEachRow(.all, includeData: false) { r in
                    if seqs[hex(r.itemID)] != r.seq { mismatches += 1 }
                    return true
                }
                return "seq mismatches \(mismatches)"
            })
        // A write that throws leaves nothing.
        t.append(
            outcome {
                try store.transaction(write: true) {
                    _ = try store.insert(rows[25])
                    throw KeychainError(errSecUserCanceled, "abandoned")
                }
            })
        t.append(answer(store, .itemID(rows[25].itemID)))
        // Replace keeps the place; new indexes, pairs and data.
        t.append(
            outcome {
                try store.transaction(write: true) {
                    let old = rows[5]
                    var new = makeRow()
                    new.itemID = old.itemID
                    new.seq = seqs[hex(old.itemID)] ?? -1
                    new.pairs = [pairPool[0], pairPool[4]]
                    try store.replace(new)
                    rows[5] = new
                    return "replaced"
                }
            })
        t.append(
            outcome {
                try store.transaction(write: true) {
                    var clash = rows[6]
                    clash.seq = seqs[hex(clash.itemID)] ?? -1
                    clash.primaryKey = rows[7].primaryKey
                    try store.replace(clash)
                    return "replaced a clash"
                }
            })
        t.append(
            outcome {
                try store.transaction(write: true) {
                    var gone = makeRow()
                    gone.seq = 1
                    try store.replace(gone)
                    return "replaced nothing"
                }
            })
        t.append(
            outcome {
                try store.transaction(write: true) {
                    var wrongSeq = rows[8]
                    wrongSeq.seq = (seqs[hex(rows[8].itemID)] ?? 0) + 1000
                    try store.replace(wrongSeq)
                    return "replaced at the wrong seq"
                }
            })
        // Deletes, pairs included; deleting what is not there is no error.
        t.append(
            outcome {
                try store.transaction(write: true) {
                    try store.delete(itemID: rows[2].itemID)
                    try store.delete(itemID: rows[24].itemID)
                    try store.delete(itemID: bytes(16))
                    return "deleted"
                }
            })
        // A row inserted after the last was deleted comes last.
        t.append(outcome { try store.transaction(write: true) { "\(try store.insert(rows[26]) > 0)" } })

        // Every lookup.
        for r in rows + [makeRow()] {
            t.append(answer(store, .itemID(r.itemID)))
            t.append(answer(store, .primaryKey(r.primaryKey), data: false))
        }
        for c in IndexColumn.allCases {
            for v in values + [bytes(8)] {
                t.append(answer(store, .indexes([(c, v)])))
            }
        }
        t.append(answer(store, .indexes([(.account, values[0]), (.service, values[1])])))
        t.append(answer(store, .indexes([(.account, values[1]), (.service, values[1]), (.label, values[2])]), data: false))
        for fp in pairPool + [bytes(12)] {
            t.append(answer(store, .pairs([fp], indexes: [])))
            t.append(answer(store, .pairs([fp], indexes: [(.account, values[0])])))
        }
        for i in 0..<pairPool.count {
            for j in (i + 1)..<pairPool.count {
                t.append(answer(store, .pairs([pairPool[i], pairPool[j]], indexes: [])))
            }
        }
        t.append(answer(store, .pairs(Array(pairPool.prefix(3)), indexes: [(.service, values[2])])))
        t.append(answer(store, .pairs([], indexes: [])))
        t.append(answer(store, .pairs([], indexes: [(.account, values[0])])))
        for c in classes + ["nope"] {
            t.append(answer(store, .scan(classCode: c)))
            t.append(answer(store, .scan(classCode: c), data: false))
        }
        t.append(answer(store, .all))
        t.append(answer(store, .all, data: false))
        t.append(answer(store, .all, limit: 3))

        // Every index, as (item id, value) pairs in a stable order.
        var idByseq: [Int64: String] = [:]
        try? store.forEachRow(.all, includeData: false) { r in
            idByseq[r.seq] = hex(r.itemID); return true
        }
        for index in StoreIndex.all {
            t.append(
                outcome {
                    var entries: [String] = []
                    try store.forEachIndexEntry(index) { seq, value in entries.append("\(idByseq[seq] ?? "?"):\(hex(Array(value)))") }
                    return "\(index): " + entries.sorted().joined(separator: " ")
                })
        }
        return t
    }

    @Test func theSameScenarioGivesTheSameAnswersOnBothStores() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let keychainA = [UInt8](repeating: 0xA1, count: 32), keychainB = [UInt8](repeating: 0xB2, count: 32)
        let pg = try Self.makeStore(dsn: dsn, keychainID: keychainA)
        // Another keychain in the same database, with the very same rows: nothing of it
        // may show through keychain A's store.
        let other = try Self.makeStore(dsn: dsn, keychainID: keychainB)
        _ = Self.scenario(other, seed: 7)

        let sqlite = try SQLiteItemStore(inMemory: ())
        let expected = Self.scenario(sqlite, seed: 7)
        let got = Self.scenario(pg, seed: 7)
        #expect(expected.count == got.count)
        #expect(expected.count > 150)
        for (i, (e, g)) in zip(expected, got).enumerated() where e != g {
            Issue.record("step \(i) differs\n--- SQLite ---\n\(e)\n--- PostgreSQL ---\n\(g)")
        }
        // The scenario exercised what it claims: some errors, rows with pairs, multi-row answers.
        #expect(expected.contains { $0.contains("error \(errSecDuplicateItem)") })
        #expect(expected.contains { $0.contains("error \(errSecItemNotFound)") })
        #expect(expected.contains { $0.split(separator: "\n").count > 3 && $0.contains("pairs=[\"") })
    }

    @Test func theHeaderIsTheLogAndFilesAreNotCopied() throws {
        let store = try Self.makeStore(dsn: try TestPostgres.shared.newDatabase(), keychainID: [UInt8](repeating: 7, count: 32))
        var statuses: [OSStatus] = []
        for body in [{ _ = try store.readKeychainRecord() }, { _ = try store.readState() }, { _ = try store.copy(toNewFile: "/tmp/never") }] {
            do { try body() } catch let e as KeychainError { statuses.append(e.status) }
        }
        #expect(statuses == [errSecUnimplemented, errSecUnimplemented, errSecUnimplemented])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never"))
        #expect(try store.structuralProblems() == nil)
        #expect(store.isStillTheOpenedFile())
        let fresh = try #require(try store.freshConnection())
        #expect(fresh !== store)
    }

    @Test func theChangeStampFollowsTheGeneration() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let id = [UInt8](repeating: 9, count: 32)
        let store = try Self.makeStore(dsn: dsn, keychainID: id)
        let before = try store.changeStamp()
        let other = TeamTables(connection: try PostgresConnection(dsn: dsn), keychainID: id)
        #expect(try other.claim(expectedGeneration: 1))
        #expect(try store.changeStamp() != before)
        // A keychain that is gone has a stamp of its own.
        try TestPostgres.shared.psql("DELETE FROM kc_keychains", database: dsn)
        #expect(try store.changeStamp().others == -1)
    }

    @Test func aNewerOrMissingSchemaIsRefused() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let c = try PostgresConnection(dsn: dsn)
        var status: OSStatus?
        do { try PostgresSchema.check(c) } catch let e as KeychainError { status = e.status }
        #expect(status == errSecDecode, "an empty database is no team database")
        try PostgresSchema.install(c)
        try PostgresSchema.install(c)   // idempotent
        #expect(try c.execute("SELECT count(*)::bigint FROM kc_schema").int64(0, 0) == 1)
        // One column per index column, and every lookup index led by keychain_id.
        let columns = try TestPostgres.shared.psql(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'kc_items' AND column_name LIKE 'i\\_%' ORDER BY 1", database: dsn)
        #expect(columns.split(separator: "\n").sorted() == IndexColumn.allCases.map { "i_\($0.rawValue)"[...] }.sorted())
        let indexes = try TestPostgres.shared.psql("SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'kc_%'", database: dsn)
        for line in indexes.split(separator: "\n") where !line.contains("kc_schema") {
            #expect(line.contains("(keychain_id"), "\(line)")
        }
        let store = PostgresItemStore(connection: c, keychainID: [1], label: "team:x")
        #expect(try store.structuralProblems() == nil)
        try TestPostgres.shared.psql("UPDATE kc_schema SET version = 2", database: dsn)
        status = nil
        do { try PostgresSchema.check(c) } catch let e as KeychainError { status = e.status }
        #expect(status == errSecWrongSecVersion)
        #expect(try store.structuralProblems()?.contains("version 2") == true)
        try TestPostgres.shared.psql("DELETE FROM kc_schema", database: dsn)
        status = nil
        do { try PostgresSchema.check(c) } catch let e as KeychainError { status = e.status }
        #expect(status == errSecDecode)
    }

    @Test func nestedTransactionsRunInsideTheOpenOne() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let store = try Self.makeStore(dsn: dsn, keychainID: [UInt8](repeating: 3, count: 32))
        let row = ItemRow(itemID: [1], classCode: "genp", rowVersion: 1, primaryKey: [2], indexes: [:], wrappedKey: [3], metadata: [4], data: [5])
        var status: OSStatus?
        do {
            try store.transaction(write: true) {
                _ = try store.insert(row)
                try store.transaction(write: true) { _ = try store.transaction(write: false) { 0 } }
                throw KeychainError(errSecUserCanceled, "abandon")
            }
        } catch let e as KeychainError { status = e.status }
        #expect(status == errSecUserCanceled)
        #expect(Self.answer(store, .all) == "", "the inner transactions did not commit the outer one's row")
        status = nil
        do { try store.transaction(write: false) { try store.transaction(write: true) { _ = try store.insert(row) } } } catch let e as KeychainError {
            status = e.status
        }
        #expect(status == errSecInternalError)
        #expect(try store.transaction(write: true) { try store.insert(row) } > 0)
    }

    @Test func twoWritersRacingForOneGenerationGiveOneWinner() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let id = [UInt8](repeating: 0x5C, count: 32)
        _ = try Self.makeStore(dsn: dsn, keychainID: id)
        for generation in UInt64(1)...8 {
            let wins = Mutex<[Bool]>([]), failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                do {
                    let c = try PostgresConnection(dsn: dsn)
                    let tables = TeamTables(connection: c, keychainID: id)
                    try c.begin(readOnlySnapshot: false)
                    let won = try tables.claim(expectedGeneration: generation)
                    // Hold the claim a moment so the other writer waits on it.
                    usleep(30_000)
                    if won { try c.commit() } else { c.rollback() }
                    wins.withLock { $0.append(won) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(wins.withLock { $0.sorted { !$0 && $1 } } == [false, true], "generation \(generation)")
        }
        let tables = TeamTables(connection: try PostgresConnection(dsn: dsn), keychainID: id)
        #expect(try tables.head()?.generation == 9)
    }
}
