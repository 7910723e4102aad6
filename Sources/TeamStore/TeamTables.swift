import KeychainCore

/// The team tables of one keychain besides its items (`kc_keychains`, `kc_log`,
/// `kc_members`, `kc_requests`, `kc_mk_wraps`): each method is one statement, and callers
/// open the transactions (a write's first statement is `claim`, an admin operation's
/// `lockForAdmin`). Everything stored here is signed or sealed by the clients.
///
/// The log is read only as runs of entries that the caller walks as one hash chain: there is
/// deliberately no statement for one entry by generation, which a server could answer from
/// another branch than the walk's (issue 29, item 2: a fact is established once, from the
/// one verified walk, and never fetched again).
package final class TeamTables {
    /// The connection every statement goes through.
    package let connection: PostgresConnection
    /// The team keychain's id.
    package let keychainID: [UInt8]

    /// The tables of keychain `keychainID` over `connection`.
    package init(connection: PostgresConnection, keychainID: [UInt8]) {
        self.connection = connection
        self.keychainID = keychainID
    }

    /// The keychain id as a parameter.
    private var id: PGValue { .bytes(keychainID) }

    /// A value the server answered that kc never writes.
    private func malformed(_ what: String) -> KeychainError { Self.malformed(what) }

    /// A value the server answered that kc never writes.
    private static func malformed(_ what: String) -> KeychainError {
        KeychainError(errSecIO, "the PostgreSQL server answered a malformed \(what) for the team keychain")
    }

    /// A generation as a bigint parameter. - Throws: errSecParam above Int64.max.
    private static func int64(_ v: UInt64) throws -> PGValue {
        guard let x = Int64(exactly: v) else { throw KeychainError(errSecParam, "generation \(v) is out of range") }
        return .int64(x)
    }

    // MARK: - The keychain row and the log

    /// Creates the keychain row (generation 1, key generation 1, schema and minimum writer
    /// version 1) and its first log entry (generation 1, kind 1: the roster), in one statement.
    /// - Throws: errSecDuplicateKeychain when a keychain with this id exists.
    package func createKeychain(genesis: [UInt8], firstEntry: [UInt8], head: [UInt8]) throws {
        let r = try connection.execute(
            """
            WITH k AS (
                INSERT INTO kc_keychains (keychain_id, generation, key_gen, head, schema_version, min_writer_version, genesis)
                VALUES ($1, 1, 1, $2, \(PostgresSchema.version), 1, $3) ON CONFLICT DO NOTHING RETURNING keychain_id)
            INSERT INTO kc_log (keychain_id, generation, kind, entry) SELECT keychain_id, 1, 1, $4 FROM k
            """, [id, .bytes(head), .bytes(genesis), .bytes(firstEntry)])
        guard r.affectedRows == 1 else {
            throw KeychainError(errSecDuplicateKeychain, "a team keychain with this id already exists in the database")
        }
    }

    /// The columns `decodeHead` reads, in its order.
    package static let headColumns = "generation, key_gen, head, schema_version, min_writer_version"

    /// The head in the first columns of the first row of `r`; nil when there is no row.
    /// - Throws: errSecIO.
    package static func decodeHead(_ r: PGResult) throws -> TeamHead? {
        guard r.rowCount > 0 else { return nil }
        guard let generation = r.int64(0, 0).flatMap({ UInt64(exactly: $0) }), let keyGen = r.int64(0, 1).flatMap({ UInt32(exactly: $0) }),
            let head = r.bytes(0, 2), let schema = r.int64(0, 3).flatMap({ UInt32(exactly: $0) }),
            let minWriter = r.int64(0, 4).flatMap({ UInt32(exactly: $0) })
        else { throw malformed("keychain row") }
        return TeamHead(generation: generation, keyGeneration: keyGen, head: head, schemaVersion: schema, minWriterVersion: minWriter)
    }

    /// The keychain's row; nil when there is no keychain with this id.
    package func head() throws -> TeamHead? {
        try Self.decodeHead(connection.executePrepared("SELECT \(Self.headColumns) FROM kc_keychains WHERE keychain_id = $1", [id]))
    }

    /// The keychain's genesis record; nil when there is no keychain with this id.
    package func genesis() throws -> [UInt8]? {
        let r = try connection.execute("SELECT genesis FROM kc_keychains WHERE keychain_id = $1", [id])
        guard r.rowCount > 0 else { return nil }
        guard let g = r.bytes(0, 0) else { throw malformed("genesis record") }
        return g
    }

    /// The compare-and-swap that starts a write: moves the generation from
    /// `expectedGeneration` to the next. False when another writer moved it first (the
    /// caller rolls back, catches up and retries).
    package func claim(expectedGeneration: UInt64) throws -> Bool {
        let r = try connection.executePrepared(
            "UPDATE kc_keychains SET generation = generation + 1 WHERE keychain_id = $1 AND generation = $2",
            [id, try Self.int64(expectedGeneration)])
        return r.affectedRows == 1
    }

    /// The keychain's row, locked until the transaction ends (`FOR UPDATE`): admin
    /// operations (membership, re-key) hold it so no write interleaves.
    package func lockForAdmin() throws -> TeamHead? {
        try Self.decodeHead(connection.execute("SELECT \(Self.headColumns) FROM kc_keychains WHERE keychain_id = $1 FOR UPDATE", [id]))
    }

    /// Appends the log entry at `generation` of `kind` (0 items, 1 roster) and moves the
    /// head to `newHead` (and the key generation, when given), in one statement.
    /// - Throws: errSecDuplicateItem when an entry at `generation` exists.
    package func append(generation: UInt64, kind: Int16, entry: [UInt8], newHead: [UInt8], keyGeneration: UInt32?) throws {
        let newKeyGeneration: PGValue? = keyGeneration.map { .int64(Int64($0)) }
        let r = try connection.executePrepared(
            """
            WITH l AS (INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, $3, $4) RETURNING 1)
            UPDATE kc_keychains SET head = $5, key_gen = COALESCE($6::bigint, key_gen) WHERE keychain_id = $1 AND EXISTS (SELECT 1 FROM l)
            """, [id, try Self.int64(generation), .int64(Int64(kind)), .bytes(entry), .bytes(newHead), newKeyGeneration])
        guard r.affectedRows == 1 else {
            throw KeychainError(errSecIO, "the team keychain's row is gone: the log entry was not appended")
        }
    }

    /// The log entries after `generation` (of `kind` only, when given), oldest first.
    package func entries(after generation: UInt64, kind: Int16? = nil) throws -> [(generation: UInt64, entry: [UInt8])] {
        let r: PGResult
        if let kind {
            r = try connection.execute(
                "SELECT generation, entry FROM kc_log WHERE keychain_id = $1 AND generation > $2 AND kind = $3 ORDER BY generation",
                [id, try Self.int64(generation), .int64(Int64(kind))])
        } else {
            r = try connection.executePrepared(
                "SELECT generation, entry FROM kc_log WHERE keychain_id = $1 AND generation > $2 ORDER BY generation",
                [id, try Self.int64(generation)])
        }
        return try decodeEntries(r)
    }

    /// The log entries after `generation` up to `last`, oldest first (a catch-up to a head
    /// seen by an earlier statement: the entries up to it were committed with it).
    package func entries(after generation: UInt64, through last: UInt64) throws -> [(generation: UInt64, entry: [UInt8])] {
        try decodeEntries(
            connection.executePrepared(
                "SELECT generation, entry FROM kc_log WHERE keychain_id = $1 AND generation > $2 AND generation <= $3 ORDER BY generation",
                [id, try Self.int64(generation), try Self.int64(last)]))
    }

    /// At most `limit` log entries after `generation`, oldest first: a first open pages
    /// through the whole log with these, holding one page at a time.
    package func entries(after generation: UInt64, limit: Int) throws -> [(generation: UInt64, entry: [UInt8])] {
        // Read in place (`PGRows`): each entry's bytes are copied once, into the answer.
        let r = try connection.executeRows(
            "SELECT generation, entry FROM kc_log WHERE keychain_id = $1 AND generation > $2 ORDER BY generation LIMIT $3",
            [id, try Self.int64(generation), .int64(Int64(max(limit, 1)))])
        return try (0..<r.rowCount).map { i in
            guard let g = r.int64(i, 0).flatMap({ UInt64(exactly: $0) }), let e = r.bytes(i, 1) else { throw malformed("log entry") }
            return (g, e)
        }
    }

    /// The (generation, entry) rows of a log query. - Throws: errSecIO for a malformed one.
    private func decodeEntries(_ r: PGResult) throws -> [(generation: UInt64, entry: [UInt8])] {
        try (0..<r.rowCount).map { i in
            guard let g = r.int64(i, 0).flatMap({ UInt64(exactly: $0) }), let e = r.bytes(i, 1) else { throw malformed("log entry") }
            return (g, e)
        }
    }

    // MARK: - Members and join requests

    /// Every member record, by member id.
    package func members() throws -> [(memberID: [UInt8], record: [UInt8])] {
        let r = try connection.execute("SELECT member_id, record FROM kc_members WHERE keychain_id = $1 ORDER BY member_id", [id])
        return try (0..<r.rowCount).map { i in
            guard let m = r.bytes(i, 0), let rec = r.bytes(i, 1) else { throw malformed("member record") }
            return (m, rec)
        }
    }

    /// Stores (or replaces) the record of member `memberID`.
    package func putMember(_ memberID: [UInt8], record: [UInt8]) throws {
        try connection.execute(
            """
            INSERT INTO kc_members (keychain_id, member_id, record) VALUES ($1, $2, $3)
            ON CONFLICT (keychain_id, member_id) DO UPDATE SET record = EXCLUDED.record
            """, [id, .bytes(memberID), .bytes(record)])
    }

    /// Removes the record of member `memberID` (nothing when there is none).
    package func deleteMember(_ memberID: [UInt8]) throws {
        try connection.execute("DELETE FROM kc_members WHERE keychain_id = $1 AND member_id = $2", [id, .bytes(memberID)])
    }

    /// Stores (or replaces) the join request of the device with `fingerprint`.
    package func putRequest(fingerprint: String, request: [UInt8]) throws {
        try connection.execute(
            """
            INSERT INTO kc_requests (keychain_id, fingerprint, request) VALUES ($1, $2, $3)
            ON CONFLICT (keychain_id, fingerprint) DO UPDATE SET request = EXCLUDED.request, created = now()
            """, [id, .text(fingerprint), .bytes(request)])
    }

    /// The join request of the device with `fingerprint`; nil when there is none.
    package func request(fingerprint: String) throws -> [UInt8]? {
        let r = try connection.execute("SELECT request FROM kc_requests WHERE keychain_id = $1 AND fingerprint = $2", [id, .text(fingerprint)])
        guard r.rowCount > 0 else { return nil }
        guard let q = r.bytes(0, 0) else { throw malformed("join request") }
        return q
    }

    /// Removes the join request of `fingerprint` (nothing when there is none).
    package func deleteRequest(fingerprint: String) throws {
        try connection.execute("DELETE FROM kc_requests WHERE keychain_id = $1 AND fingerprint = $2", [id, .text(fingerprint)])
    }

    // MARK: - Master-key wraps

    /// Stores (or replaces) the MK of `keyGeneration` sealed to `memberID`, with the
    /// admin's signature over it.
    package func putWrap(keyGeneration: UInt32, memberID: [UInt8], sealed: [UInt8], signature: [UInt8]) throws {
        try connection.execute(
            """
            INSERT INTO kc_mk_wraps (keychain_id, key_gen, member_id, sealed, sig) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (keychain_id, key_gen, member_id) DO UPDATE SET sealed = EXCLUDED.sealed, sig = EXCLUDED.sig
            """, [id, .int64(Int64(keyGeneration)), .bytes(memberID), .bytes(sealed), .bytes(signature)])
    }

    /// The MK of `keyGeneration` sealed to `memberID` and its signature; nil when there is none.
    package func wrap(keyGeneration: UInt32, memberID: [UInt8]) throws -> (sealed: [UInt8], signature: [UInt8])? {
        let r = try connection.executePrepared(
            "SELECT sealed, sig FROM kc_mk_wraps WHERE keychain_id = $1 AND key_gen = $2 AND member_id = $3",
            [id, .int64(Int64(keyGeneration)), .bytes(memberID)])
        guard r.rowCount > 0 else { return nil }
        guard let s = r.bytes(0, 0), let g = r.bytes(0, 1) else { throw malformed("master-key wrap") }
        return (s, g)
    }

    /// Removes every wrap of `keyGeneration` (after a re-key).
    package func deleteWraps(keyGeneration: UInt32) throws {
        try connection.execute("DELETE FROM kc_mk_wraps WHERE keychain_id = $1 AND key_gen = $2", [id, .int64(Int64(keyGeneration))])
    }
}
