import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// A database password must not sit in the process list (issue 29, item 6; docs/team.md,
/// "Keeping a database password out of the process list"): every local user can read a
/// command line in /proc/PID/cmdline. kc moves `--dsn` into a pipe before it execs
/// kc-team, `--dsn-file` and `--dsn-stdin` never put it there, and a `--dsn` with a
/// password draws a warning.
@Suite struct DSNProcessListTests {
    static let password = "runner-pw-6d1e"

    /// The command line of process `pid`, its arguments joined by spaces.
    static func commandLine(_ pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }

    /// The DSN of the runner role, with its password.
    static func runnerDSN(_ dsn: String) -> String {
        dsn.replacingOccurrences(of: "postgres@", with: "postgres:\(password)@")
    }

    /// An admin home with team:infra.
    static func admin(_ dsn: String) throws -> KCHome {
        let home = try KCHome()
        try TeamCommandTests.run(home, ["team", "create", "infra", "--dsn", dsn, "--member", "admin", "--kdf", "interactive"])
        return home
    }

    /// The documented `kc team add-runner … --dsn 'postgresql://ci_prod:PW@…'`, read from
    /// /proc while kc-team runs (it waits for the team password on standard input).
    @Test func aRunnersPasswordGivenWithDSNIsNotInKcTeamsCommandLine() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try Self.admin(dsn)
        let child = try Spawn.start(
            [KCBinary.path, "team", "add-runner", "ci-a", "-k", "team:infra", "--dsn", Self.runnerDSN(dsn), "--password-stdin"],
            environment: home.environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
            stdin: Data((TeamCommandTests.teamPassword + "\n").utf8), timeout: 60)
        var seen = ""
        for _ in 0..<200 {
            seen = Self.commandLine(child.pid)
            if seen.contains("kc-team") && seen.contains("add-runner") { break }
            usleep(25_000)
        }
        #expect(seen.contains("kc-team") && seen.contains("add-runner"), "kc-team never ran: \(seen)")
        #expect(!seen.contains(Self.password), "the runner's database password is in the process list: \(seen)")
        let out = try child.finish()
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("warning: the DSN given with --dsn holds a password"), "\(out.stderr)")
        #expect(try RunnerTokenDSNTests.dsn(in: out.stdout) == Self.runnerDSN(dsn))
    }

    /// The documented ways without a password on any command line: `--dsn-file` and
    /// `--dsn-stdin` (also for `kc team create`), with no warning; standard input cannot
    /// give both the DSN and the team password.
    @Test func aDSNFromAFileOrStandardInputTakesNoCommandLine() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try KCHome()
        let created = try TeamCommandTests.run(
            home, ["team", "create", "infra", "--dsn-stdin", "--member", "admin", "--kdf", "interactive"],
            stdin: Data((dsn + "\n").utf8))
        #expect(created.stdout.hasPrefix("kct1:"))
        let file = home.directory + "/runner.dsn"
        try (Self.runnerDSN(dsn) + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try TeamCommandTests.run(home, ["team", "add-runner", "ci-b", "-k", "team:infra", "--dsn-file", file])
        #expect(try RunnerTokenDSNTests.dsn(in: fromFile.stdout) == Self.runnerDSN(dsn))
        #expect(!fromFile.stderr.contains("warning"), "\(fromFile.stderr)")
        let fromStdin = try TeamCommandTests.run(
            home, ["team", "add-runner", "ci-c", "-k", "team:infra", "--dsn-stdin"],
            stdin: Data(Self.runnerDSN(dsn).utf8))
        #expect(try RunnerTokenDSNTests.dsn(in: fromStdin.stdout) == Self.runnerDSN(dsn))
        #expect(!fromStdin.stderr.contains("warning"), "\(fromStdin.stderr)")
        let both = try home.kc(["team", "add-runner", "ci-d", "-k", "team:infra", "--dsn-stdin", "--password-stdin"], stdin: Data("x\n".utf8))
        #expect(both.status == Int32(UInt8(truncatingIfNeeded: errSecParam)), "\(both.stderr)")
        let twice = try home.kc(["team", "add-runner", "ci-e", "-k", "team:infra", "--dsn", dsn, "--dsn-file", file], password: TeamCommandTests.teamPassword)
        #expect(twice.status == Int32(UInt8(truncatingIfNeeded: errSecParam)), "\(twice.stderr)")
    }
}
