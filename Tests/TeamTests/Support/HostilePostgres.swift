import Foundation
import KeychainCore
import KCTestSupport

/// The PostgreSQL server as the attacker (issue 29, "The attackers become part of the
/// suite"; `docs/team.md`, "What the server can and cannot do"): a database of the real
/// test cluster (`TestPostgres`) that the test then turns against kc with real SQL, as its
/// superuser. Each method is one thing a hostile server, or whoever can restore its dumps,
/// does; a test reads as the attack:
///
///     let server = try HostilePostgres()
///     let before = try server.dump()            // pg_dump, custom format
///     … kc team remove bob-laptop …
///     try server.restore(before)                 // pg_restore --clean: a rollback
///
/// Tricks beyond rows: `keep` copies the kc tables into a schema of their own (a history
/// kept beside the live one); `answer` swaps a view in for a kc table that answers one
/// chosen statement (by its text, `current_query()`) from a kept history and every other
/// from the live table; `show` swaps views in for every kc table that show one role (a
/// member's) a kept history and everyone else the live one; `route` sends every new
/// connection to a writable history (`keepWritable`) while the open ones keep the live one; `freeze` makes the server
/// drop every new log entry. Stalls (held locks, a peer that never answers) live in
/// `StalledServer`.
final class HostilePostgres {
    /// The cluster the database is on.
    let cluster: TestPostgres
    /// The database's DSN as the superuser (what the admin's `kc team create` is given).
    let dsn: String
    /// The database's name.
    let database: String
    /// Where dumps are written (removed at the end).
    private let folder: String
    /// The roles made for members (`dsn(role:)`), by the name the test gave.
    private var roles: [String: String] = [:]

    /// The kc tables a dump, a history or a view trick covers.
    static let tables = ["kc_keychains", "kc_log", "kc_members", "kc_requests", "kc_mk_wraps", "kc_items", "kc_pairs"]

    /// A fresh database on `cluster`.
    init(cluster: TestPostgres = .shared) throws {
        self.cluster = cluster
        dsn = try cluster.newDatabase()
        database = TestPostgres.databaseName(of: dsn)
        folder = NSTemporaryDirectory() + "/kc-hostile-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Runs `sql` as the superuser; answers psql's unaligned output.
    @discardableResult
    func sql(_ sql: String) throws -> String { try cluster.psql(sql, database: database) }

    /// The server's head: `generation:hex of the head`, as `kc team head` prints it.
    func head() throws -> String {
        try sql("SELECT generation || ':' || encode(head, 'hex') FROM kc_keychains").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - Roles

    /// A DSN of this database as a role of its own for one member (made on first use, a
    /// login without superuser rights, allowed what kc's statements need), so that `show`
    /// can tell that member's statements from everyone else's.
    func dsn(role name: String) throws -> String {
        if let role = roles[name] { return try cluster.dsn(database: database, role: role) }
        let role = "\(database)_\(name)".lowercased().filter { $0.isLetter || $0.isNumber || $0 == "_" }
        try sql("CREATE ROLE \(role) LOGIN")
        roles[name] = role
        try grantAll()
        return try cluster.dsn(database: database, role: role)
    }

    /// The role `dsn(role:)` made for `name`.
    func role(_ name: String) -> String? { roles[name] }

    /// Lets every member role use every table and view of the database (again after views
    /// were swapped in).
    private func grantAll() throws {
        for role in roles.values {
            try sql("GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        }
    }

    // MARK: - Dumps

    /// A `pg_dump` of the kc tables (custom format), as a backup would hold them.
    struct Dump { let file: String }

    /// Dumps the kc tables now.
    func dump() throws -> Dump {
        let file = folder + "/dump-\(UUID().uuidString).pgdump"
        let out = try Spawn.run(
            [
                try cluster.binFolder() + "/pg_dump", "-h", "127.0.0.1", "-p", String(try cluster.port()), "-U", "postgres",
                "-Fc", "-f", file
            ] + Self.tables.flatMap { ["-t", $0] } + [database],
            environment: Self.environment, timeout: 60)
        guard out.status == 0 else { throw KeychainError(errSecIO, "pg_dump failed (\(out.status)): \(out.stderr)") }
        return Dump(file: file)
    }

    /// Restores `dump` over the live tables (`pg_restore --clean`, one transaction): every
    /// row as it was when it was dumped.
    func restore(_ dump: Dump) throws {
        let out = try Spawn.run(
            [
                try cluster.binFolder() + "/pg_restore", "-h", "127.0.0.1", "-p", String(try cluster.port()), "-U", "postgres",
                "--clean", "--if-exists", "--single-transaction", "-d", database, dump.file
            ],
            environment: Self.environment, timeout: 60)
        guard out.status == 0 else { throw KeychainError(errSecIO, "pg_restore failed (\(out.status)): \(out.stderr)") }
        try grantAll()
    }

    // MARK: - Histories and views keyed on who asks

    /// A copy of every kc table in a schema of its own: a history the server keeps to show
    /// later, beside whatever the live tables become.
    struct History { let schema: String }

    /// Copies the kc tables as they are now into the schema `name`.
    func keep(_ name: String) throws -> History {
        let schema = "kept_" + name.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "_" }
        try sql("CREATE SCHEMA \(schema);" + Self.tables.map { "CREATE TABLE \(schema).\($0) AS TABLE public.\($0);" }.joined())
        return History(schema: schema)
    }

    /// Swaps in, for `table`, a view that answers every statement whose text (the client's,
    /// `current_query()`) is LIKE `pattern` from `history`, and every other statement from
    /// the live table (renamed `table_live`): a server that tells one statement the truth
    /// and the others another branch.
    func answer(_ table: String, statementsLike pattern: String, from history: History) throws {
        let p = "'" + pattern.replacingOccurrences(of: "'", with: "''") + "'"
        try sql(
            """
            BEGIN;
            ALTER TABLE public.\(table) RENAME TO \(table)_live;
            CREATE VIEW public.\(table) AS
                SELECT * FROM public.\(table)_live WHERE current_query() NOT LIKE \(p)
                UNION ALL SELECT * FROM \(history.schema).\(table) WHERE current_query() LIKE \(p);
            COMMIT;
            """)
        try grantAll()
    }

    /// Swaps in, for every kc table, a view that shows the member of role `member` (see
    /// `dsn(role:)`) `history` and everyone else the live tables (renamed `…_live`): two
    /// members, two histories.
    func show(_ history: History, to member: String) throws {
        guard let role = roles[member] else { throw KeychainError(errSecParam, "no role for \(member): use dsn(role:) first") }
        var script = "BEGIN;"
        for t in Self.tables {
            script += """
                ALTER TABLE public.\(t) RENAME TO \(t)_live;
                CREATE VIEW public.\(t) AS
                    SELECT * FROM public.\(t)_live WHERE current_user <> '\(role)'
                    UNION ALL SELECT * FROM \(history.schema).\(t) WHERE current_user = '\(role)';
                """
        }
        try sql(script + "COMMIT;")
        try grantAll()
    }

    /// Copies every kc table as it is now into the schema `name` as tables that take
    /// writes (columns, keys and identity as kc made them): a history another process can
    /// go on writing on (`route(newConnectionsTo:)`).
    func keepWritable(_ name: String) throws -> History {
        let schema = "kept_" + name.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "_" }
        var script = "BEGIN; CREATE SCHEMA \(schema);"
        for t in Self.tables {
            script +=
                "CREATE TABLE \(schema).\(t) (LIKE public.\(t) INCLUDING ALL); INSERT INTO \(schema).\(t) OVERRIDING SYSTEM VALUE SELECT * FROM public.\(t);"
        }
        script += "SELECT setval(pg_get_serial_sequence('\(schema).kc_items', 'seq'), (SELECT max(seq) FROM \(schema).kc_items));"
        try sql(script + "COMMIT;")
        for role in roles.values { try sql("GRANT USAGE ON SCHEMA \(schema) TO \(role); GRANT ALL ON ALL TABLES IN SCHEMA \(schema) TO \(role)") }
        return History(schema: schema)
    }

    /// From now on every new connection to the database (a `kc team` command in its own
    /// process, the superuser's psql too) reads and writes `history` (kept with
    /// `keepWritable`), while the connections open now (the team agents', which keep
    /// theirs) go on with the live tables: two processes of one member, same role, same
    /// DSN, shown two histories. (`ALTER DATABASE … SET search_path`: the server tells them
    /// apart by when they connected; a real one can use anything.)
    func route(newConnectionsTo history: History) throws {
        try sql("ALTER DATABASE \(database) SET search_path = \(history.schema), public")
    }

    /// Takes every view and routing trick away: the live tables again, for everyone.
    func honest() throws {
        try sql("ALTER DATABASE \(database) RESET search_path")
        var script = "BEGIN;"
        for t in Self.tables {
            guard try !sql("SELECT 1 FROM pg_views WHERE schemaname = 'public' AND viewname = '\(t)'").isEmpty else { continue }
            script += "DROP VIEW public.\(t); ALTER TABLE public.\(t)_live RENAME TO \(t);"
        }
        try sql(script + "COMMIT;")
        try grantAll()
    }

    // MARK: - Freezing

    /// From now on the server drops every new log entry (a trigger that answers NULL):
    /// writers' entries never reach the log, and readers keep seeing the head as it is.
    func freeze() throws {
        try sql(
            """
            CREATE FUNCTION kc_hostile_freeze() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
            CREATE TRIGGER kc_hostile_freeze BEFORE INSERT ON kc_log FOR EACH ROW EXECUTE FUNCTION kc_hostile_freeze();
            """)
    }

    /// The environment of pg_dump and pg_restore.
    private static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "PGCONNECT_TIMEOUT": "10"]
}
