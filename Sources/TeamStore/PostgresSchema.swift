import KeychainCore

/// The tables of team keychains in PostgreSQL (`docs/team.md`, schema version 1). Every
/// value in them is client ciphertext, a blind index or public material; every row is
/// keyed by its keychain's id, so one database holds many team keychains.
package enum PostgresSchema {
    /// The schema version this build writes and reads.
    package static let version = 1

    /// The statements of version 1, each idempotent.
    static var statements: [String] {
        let indexColumns = IndexColumn.allCases.map { "i_\($0.rawValue) bytea" }.joined(separator: ",\n    ")
        var sql = [
            "CREATE TABLE IF NOT EXISTS kc_schema (version int NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS kc_keychains (
                keychain_id bytea PRIMARY KEY,
                generation bigint NOT NULL,
                key_gen bigint NOT NULL,
                head bytea NOT NULL,
                schema_version int NOT NULL,
                min_writer_version int NOT NULL,
                genesis bytea NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS kc_log (
                keychain_id bytea NOT NULL REFERENCES kc_keychains ON DELETE CASCADE,
                generation bigint NOT NULL,
                kind smallint NOT NULL,
                entry bytea NOT NULL,
                PRIMARY KEY (keychain_id, generation)
            )
            """,
            "CREATE INDEX IF NOT EXISTS kc_log_kind ON kc_log (keychain_id, kind, generation)",
            """
            CREATE TABLE IF NOT EXISTS kc_members (
                keychain_id bytea NOT NULL REFERENCES kc_keychains ON DELETE CASCADE,
                member_id bytea NOT NULL,
                record bytea NOT NULL,
                PRIMARY KEY (keychain_id, member_id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS kc_requests (
                keychain_id bytea NOT NULL REFERENCES kc_keychains ON DELETE CASCADE,
                fingerprint text NOT NULL,
                request bytea NOT NULL,
                created timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (keychain_id, fingerprint)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS kc_mk_wraps (
                keychain_id bytea NOT NULL REFERENCES kc_keychains ON DELETE CASCADE,
                key_gen bigint NOT NULL,
                member_id bytea NOT NULL,
                sealed bytea NOT NULL,
                sig bytea NOT NULL,
                PRIMARY KEY (keychain_id, key_gen, member_id)
            )
            """,
            // UNIQUE (keychain_id, pk) as SQLite's UNIQUE (pk): primary-key fingerprints are
            // keyed per class, and a lookup by one does not filter on the class.
            """
            CREATE TABLE IF NOT EXISTS kc_items (
                keychain_id bytea NOT NULL REFERENCES kc_keychains ON DELETE CASCADE,
                item_id bytea NOT NULL,
                class text NOT NULL,
                row_version bigint NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                pk bytea NOT NULL,
                \(indexColumns),
                wrapped_key bytea NOT NULL,
                metadata bytea NOT NULL,
                data bytea,
                pclass int NOT NULL DEFAULT 0,
                PRIMARY KEY (keychain_id, item_id),
                UNIQUE (keychain_id, pk)
            )
            """,
            "CREATE UNIQUE INDEX IF NOT EXISTS kc_items_seq ON kc_items (keychain_id, seq)",
            "CREATE INDEX IF NOT EXISTS kc_items_class ON kc_items (keychain_id, class, seq)"
        ]
        for column in IndexColumn.allCases {
            let name = "i_\(column.rawValue)"
            sql.append("CREATE INDEX IF NOT EXISTS kc_items_\(column.rawValue) ON kc_items (keychain_id, \(name)) WHERE \(name) IS NOT NULL")
        }
        sql += [
            """
            CREATE TABLE IF NOT EXISTS kc_pairs (
                keychain_id bytea NOT NULL,
                fp bytea NOT NULL,
                item_id bytea NOT NULL,
                PRIMARY KEY (keychain_id, fp, item_id),
                FOREIGN KEY (keychain_id, item_id) REFERENCES kc_items (keychain_id, item_id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX IF NOT EXISTS kc_pairs_item ON kc_pairs (keychain_id, item_id, fp)",
            "INSERT INTO kc_schema (version) SELECT \(version) WHERE NOT EXISTS (SELECT 1 FROM kc_schema)"
        ]
        return sql
    }

    /// Creates the tables, indexes and the version row that are missing, in one transaction
    /// (a database that has them all is left as it is), then checks the version.
    /// - Throws: the connection's errors; errSecWrongSecVersion for a newer schema.
    package static func install(_ c: PostgresConnection) throws {
        let outer = c.inTransaction
        if !outer { try c.begin(readOnlySnapshot: false) }
        do {
            for statement in statements { try c.execute(statement) }
            try check(c)
            if !outer { try c.commit() }
        } catch {
            if !outer { c.rollback() }
            throw error
        }
    }

    /// Refuses a database kc cannot read: no `kc_schema` version (not a kc database, or
    /// one never finished) is errSecDecode; a newer version is errSecWrongSecVersion.
    package static func check(_ c: PostgresConnection) throws {
        let result: PGResult
        do {
            result = try c.execute("SELECT max(version)::bigint FROM kc_schema")
        } catch let e as KeychainError where c.lastSQLState == "42P01" {
            _ = e
            throw KeychainError(
                errSecDecode, "the database at \(c.serverName) has no kc team schema",
                hint: "create the team keychain with kc team create")
        }
        guard let found = result.int64(0, 0) else {
            throw KeychainError(
                errSecDecode, "the database at \(c.serverName) has no kc team schema version: it is damaged or was never finished",
                hint: "restore the database from a backup")
        }
        if found > Int64(version) {
            throw KeychainError(
                errSecWrongSecVersion, "the database at \(c.serverName) has team schema version \(found); this kc reads up to \(version)",
                hint: "upgrade kc to open this team keychain")
        }
        if found < 1 {
            throw KeychainError(
                errSecDecode, "the database at \(c.serverName) has team schema version \(found), which kc never writes",
                hint: "restore the database from a backup")
        }
    }
}
