import KeychainCore

/// Writing many re-sealed rows at once (a re-key, `TeamAuthority.changeRoster`): one
/// statement per batch of rows instead of one `replace` each, so the re-key costs a few
/// round trips and one set-based update on the server rather than a round trip per item.
extension PostgresItemStore {
    /// Stores new versions of existing rows that keep their item id, place (`seq`), class
    /// and data (a re-key re-wraps data keys and re-seals metadata, never a secret's
    /// ciphertext): every other column is set to what `rows` say, in one UPDATE, and their
    /// pair rows are replaced, in two more statements. The data column is not sent: each
    /// row must still have data exactly when the new row says so (and data is never
    /// empty), or nothing is written.
    /// - Throws: errSecItemNotFound when a row is no longer as it was (another id, place,
    ///   class, or data present where the row has none or the reverse); errSecDecode for
    ///   an empty data column (as a read with the data refuses it); errSecDuplicateItem
    ///   when a primary key is taken (the unique constraint); the connection's errors.
    package func replaceResealed(_ rows: ArraySlice<ItemRow>) throws {
        guard !rows.isEmpty else { return }
        var versions: [Int64] = []
        versions.reserveCapacity(rows.count)
        for row in rows {
            guard let version = Int64(exactly: row.rowVersion) else {
                throw KeychainError(errSecParam, "row version \(row.rowVersion) is out of range")
            }
            versions.append(version)
        }
        let ids: [[UInt8]?] = rows.map(\.itemID)
        var params: [PGValue?] = [
            .bytes(keychainID),
            .byteaArray(ids),
            .int64Array(rows.map(\.seq)),
            .textArray(rows.map(\.classCode)),
            .int64Array(rows.map { $0.data == nil ? 0 : 1 }),
            .int64Array(versions),
            .int64Array(rows.map { Int64($0.protection.rawValue) }),
            .byteaArray(rows.map(\.primaryKey))
        ]
        params += IndexColumn.allCases.map { c in .byteaArray(rows.map { $0.indexes[c] }) }
        params += [.byteaArray(rows.map(\.wrappedKey)), .byteaArray(rows.map(\.metadata))]
        let result = try connection.executePrepared(Self.resealSQL, params)
        params.removeAll()
        guard result.affectedRows == rows.count else {
            // As a read refuses it (`forEachRow` with the data): sealed data is never empty.
            let empty = try connection.execute(
                "SELECT 1 FROM kc_items WHERE keychain_id = $1 AND item_id = ANY($2::bytea[]) AND length(data) = 0 LIMIT 1",
                [.bytes(keychainID), .byteaArray(ids)])
            if empty.rowCount > 0 {
                throw KeychainError(errSecDecode, "a row of \(label) has an empty data column: the keychain is damaged or was tampered with")
            }
            throw KeychainError(
                errSecItemNotFound, "\(rows.count - result.affectedRows) of \(rows.count) items of \(label) changed or vanished during the re-key")
        }
        // The pairs' fingerprints are keyed too: the old ones go, the new ones come.
        try connection.executePrepared(
            "DELETE FROM kc_pairs WHERE keychain_id = $1 AND item_id = ANY($2::bytea[])",
            [.bytes(keychainID), .byteaArray(ids)])
        var fps: [[UInt8]?] = [], owners: [[UInt8]?] = []
        for row in rows {
            for fp in row.pairs {
                fps.append(fp)
                owners.append(row.itemID)
            }
        }
        guard !fps.isEmpty else { return }
        try connection.executePrepared(
            "INSERT INTO kc_pairs (keychain_id, fp, item_id) SELECT $1, u.fp, u.item_id FROM unnest($2::bytea[], $3::bytea[]) AS u(fp, item_id)",
            [.bytes(keychainID), .byteaArray(fps), .byteaArray(owners)])
    }

    /// `replaceResealed`'s UPDATE: the rows' new columns as parallel arrays ($2…), joined to
    /// the stored rows by keychain, item id and place, and only where class and the
    /// presence of data are what the new rows say and the data is not empty.
    private static var resealSQL: String {
        let indexes = IndexColumn.allCases.map { "i_\($0.rawValue)" }
        let sets = (["row_version", "pk"] + indexes + ["wrapped_key", "metadata"]).map { "\($0) = u.\($0)" } + ["pclass = u.pclass"]
        let arrays =
            ["$2::bytea[]", "$3::bigint[]", "$4::text[]", "$5::bigint[]", "$6::bigint[]", "$7::bigint[]", "$8::bytea[]"]
            + indexes.indices.map { "$\(9 + $0)::bytea[]" }
            + ["$\(9 + indexes.count)::bytea[]", "$\(10 + indexes.count)::bytea[]"]
        let names = ["item_id", "seq", "class", "has_data", "row_version", "pclass", "pk"] + indexes + ["wrapped_key", "metadata"]
        return "UPDATE kc_items AS t SET " + sets.joined(separator: ", ")
            + " FROM unnest(" + arrays.joined(separator: ", ") + ") AS u(" + names.joined(separator: ", ") + ")"
            + " WHERE t.keychain_id = $1 AND t.item_id = u.item_id AND t.seq = u.seq AND t.class = u.class"
            + " AND (t.data IS NOT NULL) = (u.has_data <> 0) AND coalesce(length(t.data), 1) > 0"
    }

    /// Runs `body` (statements joining a batch of rows to `kc_items`, as `replaceResealed`)
    /// with hash and merge joins off for this transaction: the planner, which cannot know
    /// that a batch is a few thousand rows of a keychain of many, would otherwise hash the
    /// whole keychain's rows for each batch. The settings are local to the transaction
    /// (`set_config(…, true)`: nothing stays on a pooled session) and are set back to what
    /// they were when `body` ends.
    package func preferringIndexJoins<T>(_ body: () throws -> T) throws -> T {
        let before = try connection.execute(
            "SELECT current_setting('enable_hashjoin'), current_setting('enable_mergejoin'), "
                + "set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)")
        guard let hash = before.text(0, 0), let merge = before.text(0, 1) else {
            throw PGResult.malformed("no planner setting")
        }
        let result = try body()
        try connection.execute("SELECT set_config('enable_hashjoin', $1, true), set_config('enable_mergejoin', $2, true)", [.text(hash), .text(merge)])
        return result
    }
}
