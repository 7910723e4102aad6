import CPostgres
import KeychainCore

/// The connection string: what libpq reads from it, and what of it kc shows others
/// (`docs/team.md`, "What a join string and a runner token carry").
extension PostgresConnection {
    /// The options libpq reads from `dsn` (`PQconninfoParse`), those given only.
    /// - Throws: errSecParam with libpq's message for a malformed DSN.
    package static func parse(_ dsn: String) throws -> [String: String] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(dsn, &error) else {
            // libpq quotes the token it stumbled on, which may be the password: never repeat it.
            let message = error.map { String(cString: $0) }?.trimmedLines.withoutQuotedParts ?? "out of memory"
            if let error { PQfreemem(error) }
            throw KeychainError(
                errSecParam, "the PostgreSQL connection string is malformed: \(message)",
                hint: "check the DSN's quoting and percent-encoding (its text is not repeated here: it may hold a password)")
        }
        defer { PQconninfoFree(options) }
        return read(options, skipEmpty: false)
    }

    /// The keywords of a libpq option array that have a value (`skipEmpty`: a non-empty one).
    static func read(_ options: UnsafeMutablePointer<PQconninfoOption>, skipEmpty: Bool) -> [String: String] {
        var out: [String: String] = [:]
        var p = options
        while let keyword = p.pointee.keyword {
            if let value = p.pointee.val, !skipEmpty || value.pointee != 0 { out[String(cString: keyword)] = String(cString: value) }
            p += 1
        }
        return out
    }

    /// The libpq keywords kc passes on to others (the join string, a runner token made
    /// without `--dsn`): where the server is, which database, who to connect as, and how
    /// to check the server and the channel. Nothing that authenticates the client or names
    /// a file only this device has: never `password`, `passfile`, `sslpassword`, `sslkey`,
    /// `sslcert`, `options`, the application name, nor any keyword not listed here (a
    /// newer libpq's included), which are all left out.
    package static let shareableKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "service",
        "sslmode", "requiressl", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "sslcompression",
        "ssl_min_protocol_version", "ssl_max_protocol_version", "channel_binding", "require_auth",
        "requirepeer", "gssencmode", "krbsrvname", "gsslib", "target_session_attrs", "load_balance_hosts",
        "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout"
    ]

    /// What of `dsn` kc shows others (the join string, a runner token made without
    /// `--dsn`): only the `shareableKeywords`. Unchanged when it has no other keyword (a
    /// URI stays a URI), else the shareable options as a keyword/value string (values
    /// quoted), in either form of `dsn`.
    /// - Throws: errSecParam for a malformed DSN.
    package static func shareable(_ dsn: String) throws -> String {
        let options = try parse(dsn)
        let kept = options.filter { shareableKeywords.contains($0.key) }
        guard kept.count != options.count else { return dsn }
        return kept.sorted { $0.key < $1.key }.map { key, value in
            key + "='" + value.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
        }.joined(separator: " ")
    }

    /// libpq's defaults for what a DSN leaves out (`PQconndefaults`: the PG* variables).
    static func defaults() -> [String: String] {
        guard let options = PQconndefaults() else { return [:] }
        defer { PQconninfoFree(options) }
        return read(options, skipEmpty: true)
    }

    /// host:port/dbname of parsed options, for messages.
    static func describe(_ options: [String: String]) -> String {
        let host = options["host"] ?? options["hostaddr"] ?? "(local socket)"
        let port = options["port"].map { ":" + $0 } ?? ""
        let db = options["dbname"].map { "/" + $0 } ?? ""
        return host + port + db
    }
}
