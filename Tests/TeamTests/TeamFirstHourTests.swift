import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// The team commands as a new user meets them (issue 32, "Messages and exit codes" and
/// "JSON where scripts want it"): times in ISO 8601, `-k` chosen when one team is joined,
/// hints that paste as they are, the join string in the form the DSN was given, and
/// `kc team members --json`. The real `kc` and `kc-team` against the real PostgreSQL.
@Suite struct TeamFirstHourTests {
    static var iso: Regex<Substring> { /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/ }

    /// The `    kc …` line of a command's standard error that a user copies.
    static func pasteLine(_ stderr: String, _ prefix: String) throws -> String {
        let line = stderr.split(separator: "\n").first { $0.hasPrefix("    " + prefix) }
        return String(try #require(line, "no `\(prefix)` line to paste in: \(stderr)").dropFirst(4))
    }

    // MARK: - Times and `kc team members --json`

    /// `add-runner --expires` said "expires at 1795…" and `members` "until 1795…": both
    /// say ISO 8601 (UTC), and `members --json` carries the same strings, an expired runner
    /// as `"state": "expired"`.
    @Test func expiriesAndAdditionsAreISO8601InTextAndJSON() throws {
        // A team made in this process whose admin's team file is put in a home, so that an
        // already expired runner can be added (at least a minute ahead on the command line).
        let team = try TeamFixture()
        let admin = try KCHome()
        try TeamFile.create(
            at: admin.directory + "/data/kc/teams/infra.team", teamName: "infra", keychainID: team.keychainID, dsn: team.dsn,
            memberID: team.admin.keys.memberID, insecureTransport: false, seed: team.admin.keys.seed,
            password: SecureBytes(copying: Array(TeamCommandTests.teamPassword.utf8)), profile: .interactive)
        let oldExpiry = TeamAuthority.now + 1
        _ = try TeamAdmin.addRunner(team.admin.opened, teamName: team.name, memberName: "ci-old", role: .reader, expires: oldExpiry, dsn: team.dsn)
        let added = try TeamCommandTests.run(admin, ["team", "add-runner", "ci-new", "-k", "team:infra", "--expires", "90d"])
        let note = try #require(added.stderr.firstMatch(of: /expires at (\S+)\)/), "\(added.stderr)")
        let expires = try #require(ISO8601DateFormatter().date(from: String(note.1)), "not ISO 8601: \(note.1)")
        #expect(abs(expires.timeIntervalSinceNow - 90 * 86_400) < 120)
        #expect(added.stderr.firstMatch(of: /\d{9,}/) == nil, "epoch seconds: \(added.stderr)")
        while TeamAuthority.now < oldExpiry { usleep(200_000) }

        let text = try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra"]).stdout
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(text)")
        let newLine = try #require(lines.first { $0.hasPrefix("ci-new  reader  ") })
        #expect(newLine.hasSuffix("runner until \(note.1)"), "\(newLine)")
        #expect(newLine.contains(/\ \ added \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ by root-admin\ \ /), "\(newLine)")
        let oldLine = try #require(lines.first { $0.hasPrefix("ci-old  reader  ") })
        #expect(oldLine.contains(/runner expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), "\(oldLine)")
        #expect(text.firstMatch(of: /\d{9,}/) == nil, "epoch seconds: \(text)")

        let json = try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra", "--json"]).stdout
        #expect(json.hasSuffix("]\n"))
        let members = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]], "\(json)")
        #expect(members.map { $0["name"] as? String } == ["ci-new", "ci-old", "root-admin"])
        let byName: [String: [String: Any]] = Dictionary(uniqueKeysWithValues: members.map { ($0["name"] as? String ?? "", $0) })
        let new = try #require(byName["ci-new"]), old = try #require(byName["ci-old"]), root = try #require(byName["root-admin"])
        #expect(Set(new.keys) == ["name", "role", "fingerprint", "runner", "added", "added_by", "expires", "state", "this_device"])
        #expect(new["expires"] as? String == String(note.1))
        #expect(new["state"] as? String == "active" && old["state"] as? String == "expired")
        #expect(new["runner"] as? Bool == true && root["runner"] as? Bool == false)
        #expect(root["expires"] is NSNull && root["state"] as? String == "active")
        #expect(root["this_device"] as? Bool == true && new["this_device"] as? Bool == false)
        #expect(new["added_by"] as? String == "root-admin" && root["added_by"] as? String == "root-admin")
        for m in members {
            let addedAt = try #require(m["added"] as? String)
            #expect(ISO8601DateFormatter().date(from: addedAt) != nil, "\(addedAt)")
            #expect(addedAt.wholeMatch(of: Self.iso) != nil)
            // Each line of the text shows the same values.
            let name = try #require(m["name"] as? String), role = try #require(m["role"] as? String)
            let fingerprint = try #require(m["fingerprint"] as? String)
            #expect(lines.contains { $0.hasPrefix("\(name)  \(role)  \(fingerprint)  added \(addedAt) by ") }, "\(name): \(text)")
        }
        #expect(try #require(old["expires"] as? String).wholeMatch(of: Self.iso) != nil)
    }

    // MARK: - `-k` when one team is joined

    /// `kc team add-runner`, `members`, `head` and `verify` without `-k` act on the only
    /// team joined; with two joined they list both and ask for `-k` (exit 2), and
    /// `KC_KEYCHAIN=team:NAME` chooses as `-k` does; with none, exit 50.
    @Test func theOnlyTeamJoinedNeedsNoDashK() throws {
        let (admin, _) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let token = try TeamCommandTests.run(admin, ["team", "add-runner", "ci"]).stdout
        #expect(token.hasPrefix("kcr1:"))
        #expect(try TeamCommandTests.run(admin, ["team", "members"]).stdout.contains("ci  reader  "))
        let head = try TeamCommandTests.run(admin, ["team", "head"]).stdout
        #expect(head == (try TeamCommandTests.run(admin, ["team", "head", "-k", "team:infra"]).stdout))
        #expect(try TeamCommandTests.run(admin, ["team", "verify"]).stdout.contains(": 0 items, 2 members"))

        try TeamCommandTests.run(
            admin, ["team", "create", "ops", "--dsn", try TestPostgres.shared.newDatabase(), "--member", "ops-admin", "--kdf", "interactive"])
        let ambiguous = try TeamCommandTests.run(admin, ["team", "members"], expect: 2)
        #expect(ambiguous.stderr.hasPrefix("kc-team: this device has joined 2 team keychains (team:infra, team:ops)"), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("kc-team: hint: say which with -k team:NAME"), "\(ambiguous.stderr)")
        #expect(!ambiguous.stderr.contains("Usage:"), "\(ambiguous.stderr)")
        #expect(ambiguous.stdout.isEmpty)
        #expect(try TeamCommandTests.run(admin, ["team", "members", "-k", "team:ops"]).stdout.hasPrefix("ops-admin  admin  "))
        let byEnvironment = try TeamCommandTests.run(admin, ["team", "members"], extra: ["KC_KEYCHAIN": "team:ops"]).stdout
        #expect(byEnvironment.hasPrefix("ops-admin  admin  ") && !byEnvironment.contains("ci  reader"), "\(byEnvironment)")
        #expect(try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra"], extra: ["KC_KEYCHAIN": "team:ops"]).stdout.contains("ci  reader"))
        // A file keychain in KC_KEYCHAIN is not a team: it chooses nothing here.
        try TeamCommandTests.run(admin, ["team", "members"], expect: 2, extra: ["KC_KEYCHAIN": admin.defaultKeychain])
        // The configuration file's `team` chooses when -k and KC_KEYCHAIN do not; both beat it,
        // and a malformed file is its error (206) naming the line, not a silent default.
        let config = admin.directory + "/config"
        try FileManager.default.createDirectory(atPath: config + "/kc", withIntermediateDirectories: true)
        try "team = ops\n".write(toFile: config + "/kc/config", atomically: true, encoding: .utf8)
        let byFile = try TeamCommandTests.run(admin, ["team", "members"], extra: ["XDG_CONFIG_HOME": config]).stdout
        #expect(byFile.hasPrefix("ops-admin  admin  ") && !byFile.contains("ci  reader"), "\(byFile)")
        #expect(try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra"], extra: ["XDG_CONFIG_HOME": config]).stdout.contains("ci  reader"))
        let envBeatsFile = try TeamCommandTests.run(admin, ["team", "members"], extra: ["XDG_CONFIG_HOME": config, "KC_KEYCHAIN": "team:infra"])
        #expect(envBeatsFile.stdout.contains("ci  reader"), "\(envBeatsFile.stdout)")
        try "team = ops\nteam = infra\n".write(toFile: config + "/kc/config", atomically: true, encoding: .utf8)
        let malformed = try TeamCommandTests.run(admin, ["team", "members"], expect: 206, extra: ["XDG_CONFIG_HOME": config])
        #expect(malformed.stderr.contains(config + "/kc/config:2"), "\(malformed.stderr)")

        let nobody = try KCHome()
        let none = try TeamCommandTests.run(nobody, ["team", "members"], expect: Int32(UInt8(truncatingIfNeeded: errSecNoSuchKeychain)))
        #expect(none.stderr.contains("this device has joined no team keychain"), "\(none.stderr)")
        #expect(none.stderr.contains("kc team join"), "\(none.stderr)")
    }

    // MARK: - Hints to paste, and the join string's form

    /// The hints of `create` and `join` are whole commands: pasted into a POSIX shell as
    /// printed, they join and add the device, for a join string and a member name that
    /// need quoting (a keyword/value DSN with quotes and spaces, a name with a quote).
    @Test(arguments: [false, true])
    func theHintsPasteIntoAShellAsTheyAre(_ keywordForm: Bool) throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let port = try TestPostgres.shared.port(), db = TestPostgres.databaseName(of: dsn)
        let given =
            keywordForm
            ? "host=127.0.0.1 port=\(port) dbname=\(db) user=postgres password=pw-secret application_name='a b'"
            : "postgresql://postgres:pw-secret@127.0.0.1:\(port)/\(db)?connect_timeout=10&application_name=x"
        let admin = try KCHome()
        let created = try TeamCommandTests.run(admin, ["team", "create", "infra", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
        #expect(!created.stderr.contains("…"), "\(created.stderr)")
        let join = try Self.pasteLine(created.stderr, "kc team join ")
        #expect(!join.contains("pw-secret"))
        #expect(join == "kc team join '\(created.stdout.trimmingCharacters(in: .newlines).replacing("'", with: "'\\''"))'", "\(join)")
        let bob = try KCHome()
        let joined = try bob.sh(join + " --member \"bob's laptop\" --kdf interactive", password: TeamCommandTests.teamPassword)
        #expect(joined.status == 0, "pasted `\(join)`: \(joined.stderr)")
        let add = try Self.pasteLine(joined.stderr, "kc team add ")
        #expect(add == "kc team add --key \(joined.stdout.trimmingCharacters(in: .newlines)) -k team:infra -- 'bob'\\''s laptop'", "\(add)")
        let adding = try admin.sh(add, password: TeamCommandTests.teamPassword)
        #expect(adding.status == 0, "pasted `\(add)`: \(adding.stderr)")
        try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"])
        #expect(try TeamCommandTests.run(admin, ["team", "members"]).stdout.contains("bob's laptop  writer  "))
    }

    /// A member name starting with `-` pastes too: `join` prints it last, after `--`, where
    /// `kc team add` does not read it as an option. A name with a control or bidirectional-
    /// text character is refused at `join` and at `add`, with errSecParam.
    @Test func aMemberNameStartingWithADashPastesAndControlsAreRefused() throws {
        let (admin, join) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let param = Int32(UInt8(truncatingIfNeeded: errSecParam))
        let mallory = try KCHome()
        for name in ["bob\u{202E}pot-lapt", "bob\u{1B}[2Jlaptop"] {
            let refused = try TeamCommandTests.run(mallory, ["team", "join", join, "--member=\(name)", "--kdf", "interactive"], expect: param)
            #expect(refused.stderr.contains("a member name cannot"), "\(refused.stderr)")
        }
        let bob = try KCHome()
        let joined = try TeamCommandTests.run(bob, ["team", "join", join, "--member=--role=admin", "--kdf", "interactive"])
        let fingerprint = joined.stdout.trimmingCharacters(in: .newlines)
        let add = try Self.pasteLine(joined.stderr, "kc team add ")
        #expect(add == "kc team add --key \(fingerprint) -k team:infra -- --role=admin", "\(add)")
        let refused = try TeamCommandTests.run(admin, ["team", "add", "bob\u{200F}", "--key", fingerprint], expect: param)
        #expect(refused.stderr.contains("a member name cannot hold a control or bidirectional-text character (U+200F)"), "\(refused.stderr)")
        let adding = try admin.sh(add, password: TeamCommandTests.teamPassword)
        #expect(adding.status == 0, "pasted `\(add)`: \(adding.stderr)")
        let members = try TeamCommandTests.run(admin, ["team", "members"]).stdout
        #expect(members.contains("--role=admin  writer  "), "\(members)")
    }

    /// A URI comes back a URI (`postgresql://` or `postgres://`), without the password and
    /// the keywords that are not shared, in the join string and in a runner token made
    /// without `--dsn`; a keyword/value DSN stays keyword/value.
    @Test func theJoinStringKeepsTheFormOfTheDSNGiven() throws {
        let port = try TestPostgres.shared.port()
        for scheme in ["postgresql://", "postgres://"] {
            let dsn = try TestPostgres.shared.newDatabase(), db = TestPostgres.databaseName(of: dsn)
            let given = "\(scheme)postgres:pw-secret@127.0.0.1:\(port)/\(db)?sslmode=disable&application_name=app-secret&connect_timeout=10"
            let admin = try KCHome()
            let created = try TeamCommandTests.run(admin, ["team", "create", "infra", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
            let join = try JoinString(parsing: created.stdout.trimmingCharacters(in: .newlines))
            #expect(join.dsn == "\(scheme)postgres@127.0.0.1:\(port)/\(db)?connect_timeout=10&sslmode=disable", "\(join.dsn)")
            #expect(!created.stdout.contains("secret") && !created.stderr.contains("secret"))
            let token = try TeamCommandTests.run(admin, ["team", "add-runner", "ci"]).stdout.trimmingCharacters(in: .newlines)
            let parsed = try RunnerToken.parse(SecureBytes(copying: Array(token.utf8)))
            let runnerDSN = parsed.dsn.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            #expect(runnerDSN == join.dsn, "\(runnerDSN)")
        }
        let dsn = try TestPostgres.shared.newDatabase(), db = TestPostgres.databaseName(of: dsn)
        let admin = try KCHome()
        let given = "host=127.0.0.1 port=\(port) dbname=\(db) user=postgres password=pw-secret"
        let created = try TeamCommandTests.run(admin, ["team", "create", "infra", "--dsn", given, "--member", "admin", "--kdf", "interactive"])
        let join = try JoinString(parsing: created.stdout.trimmingCharacters(in: .newlines))
        #expect(join.dsn == "dbname='\(db)' host='127.0.0.1' port='\(port)' user='postgres'", "\(join.dsn)")
    }

    /// The URI rebuilt from the shareable keywords parses back to exactly them; what a URI's
    /// authority cannot hold (a socket folder, a host list) goes in its query.
    @Test func aRebuiltURIParsesBackToTheSharedKeywords() throws {
        for given in [
            "postgresql://kc:pw@db.example:5433/kc?sslmode=verify-full&sslrootcert=/etc/ssl/ca%20dir/ca.pem&passfile=/p",
            "postgresql://kc:pw@%2Fvar%2Frun%2Fpostgresql/kc?application_name=x",
            "postgresql://kc:pw@h1:5432,h2:5433/kc?target_session_attrs=read-write&options=-c%20x%3D1",
            "postgresql://k%40c:p%40w@[::1]:5432/d%20b?sslpassword=s",
            "postgres://kc:pw@/kc?host=/tmp&sslkey=/k"
        ] {
            let shared = try PostgresConnection.shareable(given)
            #expect(shared.hasPrefix(given.hasPrefix("postgres://") ? "postgres://" : "postgresql://"), "\(given) → \(shared)")
            let kept = try PostgresConnection.parse(given).filter { PostgresConnection.shareableKeywords.contains($0.key) }
            #expect(try PostgresConnection.parse(shared) == kept, "\(given) → \(shared)")
            #expect(!shared.contains("pw") && !shared.contains("passfile") && !shared.contains("sslkey") && !shared.contains("options"), "\(shared)")
        }
    }
}
