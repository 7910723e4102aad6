import Synchronization

/// The keychain file's schema, by version (`docs/format.md` §1). Version N's SQL turns a
/// version N-1 file into a version N file inside one transaction.
enum Migrations {
    /// The schema version this build writes.
    static let currentVersion: Int64 = 5
    /// `PRAGMA application_id` of a kc keychain: "kc" 0x00 0x01.
    static let applicationID: Int64 = 0x6B63_0001

    static let steps: [Int64: String] = [
        1: """
        CREATE TABLE kc_keychain(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            format_version INTEGER NOT NULL,
            keychain_id BLOB NOT NULL,
            key_generation INTEGER NOT NULL,
            kdf_algorithm INTEGER NOT NULL,
            kdf_opslimit INTEGER NOT NULL,
            kdf_memlimit INTEGER NOT NULL,
            kdf_salt BLOB NOT NULL,
            wrapped_master_key BLOB NOT NULL
        );
        CREATE TABLE kc_state(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            min_writer_version INTEGER NOT NULL,
            generation INTEGER NOT NULL,
            item_count INTEGER NOT NULL,
            accumulator BLOB NOT NULL,
            idle_timeout INTEGER NOT NULL,
            max_timeout INTEGER NOT NULL,
            mac BLOB NOT NULL
        );
        CREATE TABLE kc_items(
            seq INTEGER PRIMARY KEY,
            item_id BLOB NOT NULL UNIQUE,
            class TEXT NOT NULL,
            row_version INTEGER NOT NULL,
            pk BLOB NOT NULL,
            i_acct BLOB, i_svce BLOB, i_srvr BLOB, i_labl BLOB, i_sdmn BLOB,
            i_path BLOB, i_agrp BLOB, i_atag BLOB, i_klbl BLOB,
            wrapped_key BLOB NOT NULL,
            metadata BLOB NOT NULL,
            data BLOB,
            UNIQUE (pk)
        );
        CREATE INDEX kc_items_class ON kc_items(class, item_id, row_version);
        CREATE INDEX kc_items_acct ON kc_items(i_acct) WHERE i_acct IS NOT NULL;
        CREATE INDEX kc_items_svce ON kc_items(i_svce) WHERE i_svce IS NOT NULL;
        CREATE INDEX kc_items_srvr ON kc_items(i_srvr) WHERE i_srvr IS NOT NULL;
        CREATE INDEX kc_items_labl ON kc_items(i_labl) WHERE i_labl IS NOT NULL;
        CREATE INDEX kc_items_sdmn ON kc_items(i_sdmn) WHERE i_sdmn IS NOT NULL;
        CREATE INDEX kc_items_path ON kc_items(i_path) WHERE i_path IS NOT NULL;
        CREATE INDEX kc_items_agrp ON kc_items(i_agrp) WHERE i_agrp IS NOT NULL;
        CREATE INDEX kc_items_atag ON kc_items(i_atag) WHERE i_atag IS NOT NULL;
        CREATE INDEX kc_items_klbl ON kc_items(i_klbl) WHERE i_klbl IS NOT NULL;
        """,
        // Format 2: the integrity scans read the table itself, so the covering index that let
        // SQLite answer them from stale index pages goes (docs/format.md §1, issue 15).
        2: "DROP INDEX kc_items_class;",
        // Format 3: the fingerprints of generic passwords' Secret Service pairs, one row per
        // pair, keyed by the item's seq (docs/format.md §1, §5). WITHOUT ROWID: the table is
        // its primary key's b-tree, read in seq order by the integrity scan and by the rows'
        // own lookups; kc_pairs_fp (fp, then seq) answers a search by pair.
        3: """
        CREATE TABLE kc_pairs(
            seq INTEGER NOT NULL,
            fp BLOB NOT NULL,
            PRIMARY KEY (seq, fp)
        ) WITHOUT ROWID;
        CREATE INDEX kc_pairs_fp ON kc_pairs(fp);
        """,
        // Format 4: each row's protection class (0 when unlocked, 1 after first unlock), the
        // class key that wraps its data key and seals its metadata (docs/format.md §1–3).
        // Every existing row starts at 0, as formats 1–3 sealed it; the password-time
        // migration moves after-first-unlock items (Keychain+Migration.swift).
        4: "ALTER TABLE kc_items ADD COLUMN pclass INTEGER NOT NULL DEFAULT 0;",
        // Format 6: the key slots beyond the password slot (a recovery key; a TPM2 slot),
        // each one more wrap of the master key, every one inside the password record the
        // header MAC covers (docs/format.md §2.1, §2.2). Empty until a slot is added.
        5: """
        CREATE TABLE kc_keyslots(
            id INTEGER PRIMARY KEY CHECK (id > 1),
            kind TEXT NOT NULL,
            created INTEGER NOT NULL,
            fields BLOB NOT NULL
        );
        """
    ]

    /// The `sqlite_schema` entries a file of `version` has: the steps up to it, applied to an
    /// empty in-memory database (worked out once per process). A file whose schema differs
    /// in any way is refused (`SQLiteItemStore.checkSchema`).
    static func expectedSchema(version: Int64) throws -> [String] {
        try schemaCache.withLock { cache in
            if let known = cache[version] { return known }
            guard (1...currentVersion).contains(version) else {
                throw KeychainError(errSecDecode, "schema version \(version) is not one kc writes: the file was tampered with")
            }
            let db = try Database.inMemory()
            for v in 1...version {
                guard let sql = steps[v] else { throw KeychainError(errSecInternalError, "no migration to schema version \(v)") }
                try db.exec(sql)
            }
            let entries = try db.schemaEntries()
            cache[version] = entries
            return entries
        }
    }

    private static let schemaCache = Mutex<[Int64: [String]]>([:])

    /// Brings a file up to `currentVersion`. Refuses a newer file without touching it.
    static func migrate(_ db: Database) throws {
        let version = try userVersion(db)
        if version > currentVersion {
            throw KeychainError(
                errSecWrongSecVersion,
                "\(db.path) has schema version \(version); this kc reads up to \(currentVersion)",
                hint: "upgrade kc to open this keychain")
        }
        guard version < currentVersion else { return }
        // 0 is a new, empty file; below 0, or 0 with tables in it, is no file kc wrote.
        let empty = try db.schemaEntries().isEmpty
        if version < 0 || (version == 0 && !empty) {
            throw KeychainError(
                errSecDecode, "\(db.path) has schema version \(version), which kc never writes: the file is damaged or was tampered with",
                hint: "restore the keychain from a backup")
        }
        try db.transaction(write: true) {
            // Re-read under the write lock: another process may have migrated meanwhile.
            var v = try userVersion(db)
            while v < currentVersion {
                v += 1
                guard let sql = steps[v] else {
                    throw KeychainError(errSecInternalError, "no migration to schema version \(v)")
                }
                try db.exec(sql)
                try db.exec("PRAGMA user_version = \(v)")
            }
        }
    }

    static func userVersion(_ db: Database) throws -> Int64 {
        let s = try db.statement("PRAGMA user_version")
        defer { s.reset() }
        guard try s.step() else { return 0 }
        return s.int(0)
    }

    static func applicationID(_ db: Database) throws -> Int64 {
        let s = try db.statement("PRAGMA application_id")
        defer { s.reset() }
        guard try s.step() else { return 0 }
        return s.int(0)
    }
}
