import CPostgres
import KeychainCore

/// The connection string: what libpq reads from it, and what of it kc shows others
/// (`docs/team.md`, "What a join string and a runner token carry").
extension PostgresConnection {
    /// The options libpq reads from `dsn` (`PQconninfoParse`), those given only.
    /// - Throws: errSecParam with libpq's message for a malformed DSN, and for a host, port
    ///   or database name that holds an `@` (a URI whose password has an unencoded `@` or
    ///   `/`), without repeating it. A user name may hold one (`k%40c` in a URI,
    ///   `user=k@c`): the misparses above never put one there.
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
        let parsed = read(options, skipEmpty: false)
        // `postgresql://u:p@ss@host/db`: libpq takes the last `@` as the end of the password,
        // so part of the password becomes the host. `postgresql://u:pa/ss@host/db`: the
        // authority ends at the `/`, so the user becomes the host, the password's first part
        // the port and the rest, `@host` included, the database name. libpq's messages
        // ("could not translate host name", "invalid integer value … for connection option
        // port") and kc's server label would print them. None of these holds an `@`; a user
        // name may (`user@server` logins), and no misparse puts one there.
        if let field = ["host", "port", "dbname"].first(where: { parsed[$0]?.contains("@") == true }) {
            let name = ["host": "host", "port": "port", "dbname": "database name"][field] ?? field
            throw KeychainError(
                errSecParam, "the PostgreSQL connection string's \(name) holds an @: an @ in a password must be written %40",
                hint: "percent-encode the password in a postgresql:// URI (its text is not repeated here: it may hold a password)")
        }
        return parsed
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
    /// `--dsn`): only the `shareableKeywords`. Unchanged when it has no other keyword;
    /// else rebuilt from the shareable options in the form `dsn` was given: a URI
    /// (`postgresql://…` or `postgres://…`) as a URI (`uri(_:scheme:)`), a keyword/value
    /// string as one (values quoted).
    /// - Throws: errSecParam for a malformed DSN.
    package static func shareable(_ dsn: String) throws -> String {
        let options = try parse(dsn)
        let kept = options.filter { shareableKeywords.contains($0.key) }
        guard kept.count != options.count else { return dsn }
        if let scheme = uriSchemes.first(where: { dsn.hasPrefix($0) }) {
            let rebuilt = uri(kept, scheme: scheme)
            if (try? parse(rebuilt)) == kept { return rebuilt }
        }
        return kept.sorted { $0.key < $1.key }.map { key, value in
            key + "='" + value.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
        }.joined(separator: " ")
    }

    /// The prefixes of libpq's connection URIs.
    static let uriSchemes = ["postgresql://", "postgres://"]

    /// `options` as a connection URI, `scheme` first:
    /// `postgresql://USER@HOST:PORT/DBNAME?KEY=VALUE&…`, every part percent-encoded; a host
    /// list, a socket folder or a port list goes in the query (`?host=…`), where libpq
    /// takes any keyword. `shareable` uses it only when libpq parses it back to `options`.
    static func uri(_ options: [String: String], scheme: String) -> String {
        var rest = options
        var text = scheme
        if let user = rest.removeValue(forKey: "user") { text += percentEncoded(user) + "@" }
        if let host = rest["host"], !host.isEmpty, !host.contains(","), !host.hasPrefix("/"), !host.hasPrefix("@"),
            rest["port"].map({ !$0.contains(",") }) ?? true
        {
            rest["host"] = nil
            // An IPv6 address in brackets, as libpq reads it; any other host percent-encoded.
            text += host.contains(":") ? "[" + host + "]" : percentEncoded(host)
            if let port = rest.removeValue(forKey: "port") { text += ":" + percentEncoded(port) }
        }
        if let db = rest.removeValue(forKey: "dbname") { text += "/" + percentEncoded(db) }
        if !rest.isEmpty {
            text += "?" + rest.sorted { $0.key < $1.key }.map { percentEncoded($0.key) + "=" + percentEncoded($0.value) }.joined(separator: "&")
        }
        return text
    }

    /// `text` with every byte but RFC 3986's unreserved characters (letters, digits, `-._~`)
    /// written as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), digits[Int(b >> 4)], digits[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// libpq's defaults for what a DSN leaves out (`PQconndefaults`: the PG* variables).
    static func defaults() -> [String: String] {
        guard let options = PQconndefaults() else { return [:] }
        defer { PQconninfoFree(options) }
        return read(options, skipEmpty: true)
    }

    /// host:port of parsed options, for messages: never the database name, which a URI
    /// whose password holds a `/` would fill with the rest of the password, nor a port that
    /// is not digits (libpq refuses it; it may be the password's first part).
    static func describe(_ options: [String: String]) -> String {
        let host = options["host"] ?? options["hostaddr"] ?? "(local socket)"
        let port = options["port"].flatMap { p in p.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || $0 == 44 } ? ":" + p : nil } ?? ""
        return host + port
    }
}
