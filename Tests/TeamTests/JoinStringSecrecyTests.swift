import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// The join string is "not a secret: share it freely" (docs/team.md), so it must not carry
/// the database password an admin put in the DSN given to `kc team create`.
@Suite struct JoinStringSecrecyTests {
    @Test func theJoinStringLeavesOutTheDatabasePassword() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let secret = "db-pw-7f3a91"
        for given in [dsn.replacingOccurrences(of: "postgres@", with: "postgres:\(secret)@"), dsn + "?password=\(secret)"] {
            let admin = try KCHome()
            let created = try TeamCommandTests.run(admin, ["team", "create", "t\(given.count)", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
            #expect(!created.stdout.contains(secret), "the join string holds the database password: \(created.stdout)")
            #expect(!created.stderr.contains(secret))
            // It still names the same database: a device joins with it (the test cluster
            // trusts loopback; elsewhere the joiner brings its own password, ~/.pgpass).
            let join = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let bob = try KCHome()
            try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob", "--kdf", "interactive"])
        }
    }

    /// Not only the password authenticates a client: the passphrase of its TLS key
    /// (`sslpassword`), its key and certificate files and its password file do too, or name
    /// files only the admin's device has. The join string carries only an allow-list of
    /// keywords (`PostgresConnection.shareableKeywords`), in the URI form and the
    /// keyword/value form alike.
    @Test(arguments: [false, true])
    func theJoinStringCarriesOnlyShareableKeywords(_ keywordForm: Bool) throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let port = try TestPostgres.shared.port(), db = TestPostgres.databaseName(of: dsn)
        let given =
            keywordForm
            ? "host=127.0.0.1 port=\(port) dbname=\(db) user=postgres password=pw-secret-1 sslpassword='ssl pass-secret-2' "
                + "sslkey=/nowhere/key-secret-3.key sslcert=/nowhere/cert-secret-4.crt passfile=/nowhere/passfile-secret-5 application_name=app-secret-6"
            : dsn.replacingOccurrences(of: "postgres@", with: "postgres:pw-secret-1@")
                + "?sslpassword=ssl%20pass-secret-2&sslkey=/nowhere/key-secret-3.key&sslcert=/nowhere/cert-secret-4.crt"
                + "&passfile=/nowhere/passfile-secret-5&application_name=app-secret-6"
        let admin = try KCHome()
        let created = try TeamCommandTests.run(admin, ["team", "create", "t", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
        #expect(!created.stdout.contains("secret"), "the join string carries what authenticates the admin: \(created.stdout)")
        #expect(!created.stderr.contains("secret"))
        let join = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(join.contains(db) && join.contains("127.0.0.1"), "the join string still names the server: \(join)")
        let bob = try KCHome()
        try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob", "--kdf", "interactive"])
    }

    /// The allow-list itself, on both forms: a DSN of shareable keywords only is kept as
    /// it was; anything else is rebuilt from the shareable keywords alone.
    @Test func onlyShareableKeywordsLeaveTheDevice() throws {
        let uri = "postgresql://kc@db.example:5433/kc?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem&target_session_attrs=read-write"
        #expect(try PostgresConnection.shareable(uri) == uri)
        let kept = try PostgresConnection.parse(PostgresConnection.shareable(uri + "&sslpassword=S1&passfile=/p/S2&sslkey=/k/S3&options=-c%20x%3DS4"))
        #expect(
            kept == [
                "host": "db.example", "port": "5433", "dbname": "kc", "user": "kc", "sslmode": "verify-full",
                "sslrootcert": "/etc/ssl/ca.pem", "target_session_attrs": "read-write"
            ])
        let kv = "host=db.example dbname=kc password=S0 sslpassword='S 1' sslcert=/c/S5 sslmode=verify-ca"
        let shared = try PostgresConnection.shareable(kv)
        #expect(!shared.contains("S"), "\(shared)")
        #expect(try PostgresConnection.parse(shared) == ["host": "db.example", "dbname": "kc", "sslmode": "verify-ca"])
    }
}

/// libpq's parse errors quote the offending token, which may be the password (a runner's
/// DSN in a CI log, say): kc's message about a malformed DSN must not repeat it.
@Suite struct MalformedDSNMessageTests {
    @Test(arguments: [
        "postgresql://kc:pa%zzss-51@127.0.0.1/kc", "host=127.0.0.1 pa%zzss-51",
        "postgresql://kc@127.0.0.1:pa%zzss-51/kc"
    ])
    func aMalformedDSNIsRefusedWithoutQuotingIt(_ dsn: String) throws {
        let e = failure { try PostgresConnection.parse(dsn) }
        #expect(e?.status == errSecParam)
        #expect(e?.message.contains("pa%zzss") == false, "\(e?.message ?? "")")
        #expect(e?.message.contains("malformed") == true)
    }

    /// An unencoded `@` in a URI's password (`p@ssw0rd`) made libpq take the rest of the
    /// password as the host and print it ("could not translate host name \"ssw0rd@…\""),
    /// with kc's server label: kc refuses such a host without repeating it, before any
    /// connection (no server here: port 1).
    @Test func anAtInAPasswordIsRefusedWithoutRepeatingIt() throws {
        let dsn = "postgresql://postgres:p@ssw0rd@127.0.0.1:1/kc"
        let e = failure { try PostgresConnection.parse(dsn) }
        #expect(e?.status == errSecParam)
        #expect(e?.message.contains("ssw0rd") == false && e?.message.contains("%40") == true, "\(e?.message ?? "")")
        let home = try KCHome()
        let out = try TeamCommandTests.run(
            home, ["team", "create", "infra", "--dsn", dsn, "--member", "admin", "--kdf", "interactive"],
            expect: Int32(UInt8(truncatingIfNeeded: errSecParam)))
        #expect(!out.stderr.contains("ssw0rd") && !out.stdout.contains("ssw0rd"), "\(out.stderr)")
        #expect(out.stderr.contains("an @ in a password must be written %40"), "\(out.stderr)")
    }

    /// A `/` in a URI's password ends the authority there: the user became the host, the
    /// password's first part the port (`invalid integer value "S3cr3tPart" for connection
    /// option "port"`, or with digits "could not translate host name") and the rest, `@host`
    /// included, the database name, which kc's server label (host:port/dbname) printed too.
    /// The `@` in the database name is refused without repeating it, before any connection,
    /// with or without `--insecure-transport`; and a value libpq quotes in an option error
    /// (a keyword DSN's port) is not repeated either.
    @Test(arguments: [
        "postgresql://kc:S3cr3tPart/R3stPart@127.0.0.1:1/kc", "postgresql://kc:4711/R3stPart@127.0.0.1:1/kc",
        "host=127.0.0.1 port=S3cr3tPart dbname=kc"
    ])
    func aSlashInAPasswordIsRefusedWithoutRepeatingIt(_ dsn: String) throws {
        let home = try KCHome()
        for insecure in [["--insecure-transport"], []] {
            let out = try home.kc(
                ["team", "create", "t1", "--dsn-stdin", "--member", "admin", "--kdf", "interactive"] + insecure,
                password: TeamCommandTests.teamPassword, stdin: Data(dsn.utf8))
            #expect(out.status != 0)
            for part in ["S3cr3tPart", "4711", "R3stPart"] {
                #expect(!out.stderr.contains(part) && !out.stdout.contains(part), "\(insecure) \(out.stderr)")
            }
            if dsn.hasPrefix("postgresql:") {
                #expect(out.status == Int32(UInt8(truncatingIfNeeded: errSecParam)), "\(out.stderr)")
                #expect(out.stderr.contains("database name holds an @: an @ in a password must be written %40"), "\(out.stderr)")
            }
        }
    }
}
