import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore

/// A runner token goes to a CI system's secret store, and docs/team.md gives each runner
/// its own SELECT-only role: the token must not carry the admin's own database password
/// (a leaked token would then bring the admin's role), and `--dsn` gives it the runner's.
@Suite struct RunnerTokenDSNTests {
    /// The DSN inside a printed runner token.
    static func dsn(in printed: String) throws -> String {
        let token = try RunnerToken.parse(SecureBytes(copying: Array(printed.trimmingCharacters(in: .whitespacesAndNewlines).utf8)))
        return token.dsn.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aRunnerTokenCarriesNoAdminPasswordAndTakesTheRunnersDSN() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let secret = "admin-db-pw-51c0"
        let admin = try KCHome()
        try TeamCommandTests.run(
            admin,
            [
                "team", "create", "infra", "--dsn", dsn.replacingOccurrences(of: "postgres@", with: "postgres:\(secret)@"),
                "--member", "admin", "--kdf", "interactive"
            ])
        try TeamCommandTests.run(admin, ["unlock", "-k", "team:infra"])
        try TeamCommandTests.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", "deploy-token"])
        let plain = try TeamCommandTests.run(admin, ["team", "add-runner", "ci-a", "-k", "team:infra"]).stdout
        #expect(!(try Self.dsn(in: plain)).contains(secret), "the runner token carries the admin's database password")
        let runnerDSN = dsn + "?application_name=ci-b"
        let own = try TeamCommandTests.run(admin, ["team", "add-runner", "ci-b", "-k", "team:infra", "--dsn", runnerDSN]).stdout
        #expect(try Self.dsn(in: own) == runnerDSN)
        // Both tokens work (the test cluster trusts loopback).
        for token in [plain, own].map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) {
            let runner = try KCHome()
            try TeamCommandTests.run(runner, ["unlock"], password: nil, extra: ["KC_TEAM_TOKEN": token, "KC_KEYCHAIN": "team:infra"])
            #expect(
                try TeamCommandTests.run(runner, ["find", "-s", "deploy", "-a", "ci", "-w"], password: nil, extra: ["KC_KEYCHAIN": "team:infra"]).stdout
                    == "deploy-token")
        }
    }

    /// A runner token made without `--dsn` carries the admin's DSN through the allow-list:
    /// not its TLS key's passphrase (`sslpassword`), key file or password file either.
    @Test func aRunnerTokenCarriesNoneOfWhatAuthenticatesTheAdmin() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let admin = try KCHome()
        try TeamCommandTests.run(
            admin,
            [
                "team", "create", "infra", "--dsn", dsn + "?sslpassword=keypass-secret-1&sslkey=/nowhere/key-secret-2.key&passfile=/nowhere/pgpass-secret-3",
                "--member", "admin", "--kdf", "interactive"
            ])
        let printed = try TeamCommandTests.run(admin, ["team", "add-runner", "ci-a", "-k", "team:infra"]).stdout
        let carried = try Self.dsn(in: printed)
        #expect(!carried.contains("secret"), "the runner token carries what authenticates the admin: \(carried)")
        #expect(carried.contains(TestPostgres.databaseName(of: dsn)))
    }
}
