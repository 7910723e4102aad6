import Foundation
import KeychainCore

/// The file attacker (issue 29; docs/security.md, "Attacker who can write the file"): it can
/// write the keychain file and kept an older copy of it, both written by the real `kc`. It
/// makes every splice of the older copy into the live file that SQLite lets it make, with
/// sqlite3 on a copy of the live file (the old copy attached as `o`):
/// - each table whole, the header's two tables together, the rows' two tables together,
///   every table but one (each in turn), and every table at once;
/// - each row: put back as the old copy has it, or removed when the old copy did not have it,
///   and the old copy's row of each header table added beside the live one (check
///   constraints off);
/// - each column of each row both copies hold, where the two differ.
/// The password record (`kc_keychain`) and the header state (`kc_state`) are tables like the
/// others here, so every column of them is spliced too. Splicing every table at once is the
/// old copy restored whole, the one splice the file cannot tell (`isTheOldCopy`).
public struct FileSplicer: Sendable {
    /// One splice: a name that says what it puts back, and the SQL that does it.
    public struct Splice: CustomStringConvertible, Sendable {
        public let name: String
        public let sql: String
        public var description: String { name }
        /// A splice of these SQL statements, run on the live copy with the old copy attached as `o`.
        public init(name: String, sql: String) {
            self.name = name
            self.sql = sql
        }
    }

    /// Every table of a keychain and the columns that name a row of it.
    public static let tables: [(name: String, key: [String])] = [
        ("kc_keychain", ["id"]), ("kc_state", ["id"]), ("kc_items", ["item_id"]), ("kc_pairs", ["seq", "fp"])
    ]

    /// The live keychain file and the older copy of it (neither is written).
    public let live: String
    public let old: String

    public init(live: String, old: String) {
        self.live = live
        self.old = old
    }

    /// Every splice, tables first, then rows, then columns (`only` keeps those of some tables).
    public func splices(of only: Set<String>? = nil) throws -> [Splice] {
        var all: [Splice] = []
        let chosen = Self.tables.filter { only?.contains($0.name) ?? true }
        for table in chosen where try rows(table.name, in: live) != rows(table.name, in: old) {
            all.append(
                Splice(name: "table \(table.name)", sql: "DELETE FROM main.\(table.name); INSERT INTO main.\(table.name) SELECT * FROM o.\(table.name);"))
        }
        if chosen.contains(where: { $0.name == "kc_keychain" }) && chosen.contains(where: { $0.name == "kc_state" }) {
            all.append(
                Splice(
                    name: "the header (kc_keychain and kc_state)",
                    sql: ["kc_keychain", "kc_state"].map {
                        "DELETE FROM main.\($0); INSERT INTO main.\($0) SELECT * FROM o.\($0);"
                    }.joined(separator: " ")))
        }
        if only == nil {
            func restore(_ names: [String]) -> String {
                names.map { "DELETE FROM main.\($0); INSERT INTO main.\($0) SELECT * FROM o.\($0);" }.joined(separator: " ")
            }
            let names = Self.tables.map(\.name)
            all.append(Splice(name: "every table (the old copy restored whole)", sql: restore(names)))
            all.append(Splice(name: "the rows (kc_items and kc_pairs) under the live header", sql: restore(["kc_items", "kc_pairs"])))
            // The old copy restored whole but for one table, which stays live.
            for kept in names {
                all.append(Splice(name: "every table but \(kept)", sql: restore(names.filter { $0 != kept })))
            }
        }
        for table in chosen { all += try rowSplices(table.name, key: table.key) }
        for table in chosen where Self.headerTables.contains(table.name) { all.append(try secondRowSplice(table.name)) }
        for table in chosen { all += try columnSplices(table.name, key: table.key) }
        return all
    }

    /// Each row that differs: the old copy's version put back, or the live row removed
    /// when the old copy has none with its key.
    func rowSplices(_ table: String, key: [String]) throws -> [Splice] {
        let liveRows = try rows(table, in: live), oldRows = try rows(table, in: old)
        var out: [Splice] = []
        for (k, row) in oldRows.sorted(by: { $0.key < $1.key }) where liveRows[k] != row {
            let match = Self.match(key, k)
            out.append(
                Splice(
                    name: "row \(table)[\(k)] put back",
                    sql: "DELETE FROM main.\(table) WHERE \(match); INSERT INTO main.\(table) SELECT * FROM o.\(table) WHERE \(match);"))
        }
        for k in liveRows.keys.sorted() where oldRows[k] == nil {
            out.append(Splice(name: "row \(table)[\(k)] removed (not in the old copy)", sql: "DELETE FROM main.\(table) WHERE \(Self.match(key, k));"))
        }
        return out
    }

    /// The header's tables, which hold one row (`CHECK (id = 1)`).
    public static let headerTables: Set<String> = ["kc_keychain", "kc_state"]

    /// The old copy's row of a header table put beside the live one as row 2, with SQLite's
    /// check constraints turned off (as any writer of the file can): the live row stays,
    /// authentic, and the old one sits outside the header MAC.
    func secondRowSplice(_ table: String) throws -> Splice {
        let others = try Self.columns(table, in: live).filter { $0 != "id" }.joined(separator: ", ")
        return Splice(
            name: "row \(table) of the old copy added beside the live one (id 2)",
            sql: "PRAGMA ignore_check_constraints = ON; INSERT INTO main.\(table)(id, \(others)) SELECT 2, \(others) FROM o.\(table);")
    }

    /// Each column, of each row both copies hold, whose value differs.
    func columnSplices(_ table: String, key: [String]) throws -> [Splice] {
        let columns = try Self.columns(table, in: live)
        var out: [Splice] = []
        let liveCells = try cells(table, key: key, columns: columns, in: live)
        let oldCells = try cells(table, key: key, columns: columns, in: old)
        for (k, oldRow) in oldCells.sorted(by: { $0.key < $1.key }) {
            guard let liveRow = liveCells[k] else { continue }
            for (i, column) in columns.enumerated() where liveRow[i] != oldRow[i] {
                let match = Self.match(key, k)
                out.append(
                    Splice(
                        name: "column \(table).\(column) of [\(k)]",
                        sql: "UPDATE main.\(table) SET \(column) = (SELECT \(column) FROM o.\(table) WHERE \(match)) WHERE \(match);"))
            }
        }
        return out
    }

    /// Runs `splice` on the file at `path` (a copy of the live file), the old copy attached.
    /// - Throws: when sqlite3 refuses it (a constraint), with its message.
    public func apply(_ splice: Splice, to path: String) throws {
        try Self.sqlite(path, "ATTACH '\(old)' AS o; BEGIN; \(splice.sql) COMMIT;")
    }

    /// Whether the file at `path` holds, table by table and row by row, exactly what the old
    /// copy holds: the old copy restored whole, which nothing inside the file can tell apart.
    public func isTheOldCopy(_ path: String) throws -> Bool {
        try Self.content(of: path) == Self.content(of: old)
    }

    /// Every row of every table, as SQL literals in key order: what a file holds.
    public static func content(of path: String) throws -> String {
        try tables.map { table in
            try sqlite(path, "SELECT * FROM \(table.name) ORDER BY \(table.key.joined(separator: ", "));", quote: true)
        }.joined(separator: "\n")
    }

    /// The rows of `table` by key, each as one line of SQL literals.
    func rows(_ table: String, in path: String) throws -> [String: String] {
        guard let spec = Self.tables.first(where: { $0.name == table }) else { return [:] }
        let columns = try Self.columns(table, in: path)
        return try cells(table, key: spec.key, columns: columns, in: path).mapValues { $0.joined(separator: ",") }
    }

    /// The cells of `table` by key, each as an SQL literal (`quote()`).
    func cells(_ table: String, key: [String], columns: [String], in path: String) throws -> [String: [String]] {
        let keyExpr = key.map { "quote(\($0))" }.joined(separator: " || ' AND ' || ")
        let cellExpr = columns.map { "quote(\($0))" }.joined(separator: " || char(31) || ")
        let out = try Self.sqlite(path, "SELECT \(keyExpr) || char(30) || \(cellExpr) FROM \(table);")
        var result: [String: [String]] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "\u{1E}", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            result[String(parts[0])] = parts[1].split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        }
        return result
    }

    /// `a = X'..' AND b = 3` for a key printed by `cells`.
    static func match(_ key: [String], _ printed: String) -> String {
        let values = printed.components(separatedBy: " AND ")
        return zip(key, values).map { "\($0) = \($1)" }.joined(separator: " AND ")
    }

    /// The column names of `table`, in order.
    static func columns(_ table: String, in path: String) throws -> [String] {
        try sqlite(path, "SELECT name FROM pragma_table_info('\(table)');").split(separator: "\n").map(String.init)
    }

    /// Runs SQL with sqlite3 (with a deadline, like every child of the tests).
    @discardableResult
    public static func sqlite(_ path: String, _ sql: String, quote: Bool = false) throws -> String {
        let out = try Spawn.run(["/usr/bin/sqlite3", "-bail"] + (quote ? ["-quote"] : []) + [path, sql], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
        guard out.status == 0 else {
            throw KeychainError(errSecIO, "sqlite3 failed (\(out.status)) on \(path): \(out.stderr) for \(sql)")
        }
        return out.stdout
    }
}
