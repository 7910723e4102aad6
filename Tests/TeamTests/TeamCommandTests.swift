import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Team keychains from the command line, as docs/team.md shows them: the real `kc`, the
/// real `kc-team` and its agent, a real PostgreSQL. An admin's home and a second device's
/// home on one machine; a CI runner in a third with only its token.
@Suite struct TeamCommandTests {
    static let teamPassword = "team device password"

    /// Runs kc in `home` and fails the test with its output unless it exits `expect`.
    @discardableResult
    static func run(
        _ home: KCHome, _ args: [String], password: String? = teamPassword, stdin: Data? = nil, expect: Int32 = 0,
        extra: [String: String] = [:]
    ) throws -> KCBinary.Output {
        let out = try home.kc(args, password: password, stdin: stdin, extra: extra)
        #expect(out.status == expect, "kc \(args.joined(separator: " ")) exited \(out.status): \(out.stderr)")
        return out
    }

    /// An admin home with team:infra created on a fresh database, unlocked.
    static func admin(_ dsn: String) throws -> (KCHome, join: String) {
        let home = try KCHome()
        let created = try run(home, ["team", "create", "infra", "--dsn", dsn, "--member", "admin-laptop", "--kdf", "interactive"])
        let join = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(join.hasPrefix("kct1:"))
        try run(home, ["unlock", "-k", "team:infra"])
        return (home, join)
    }

    @Test func aTeamFromCreateToRemoveWorksAsAFileDoes() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, join) = try Self.admin(dsn)
        try Self.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", "deploy-token"])
        let found = try Self.run(admin, ["find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"])
        #expect(found.stdout == "deploy-token", "\(found.stdout) \(found.stderr)")
        // A second device joins, prints its fingerprint; the admin adds it with it.
        let bob = try KCHome()
        let joined = try Self.run(bob, ["team", "join", join, "--member", "bob-laptop", "--kdf", "interactive"])
        let fingerprint = joined.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fingerprint.split(separator: "-").count == 10)
        // Before the admin adds it, it opens nothing.
        try Self.run(bob, ["unlock", "-k", "team:infra"], expect: Int32(UInt8(truncatingIfNeeded: errSecAuthFailed)))
        try Self.run(admin, ["team", "add", "bob-laptop", "--key", fingerprint, "-k", "team:infra", "--role", "writer"])
        try Self.run(bob, ["unlock", "-k", "team:infra"])
        #expect(try Self.run(bob, ["find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"]).stdout == "deploy-token")
        try Self.run(bob, ["add", "-k", "team:infra", "-s", "db", "-a", "app", "-w", "db-password"])
        let read = try Self.run(admin, ["read", "-k", "team:infra", "kc://db/app"])
        #expect(read.stdout.hasPrefix("db-password"), "\(read.stdout) \(read.stderr)")
        let members = try Self.run(admin, ["team", "members", "-k", "team:infra"]).stdout
        #expect(members.contains("bob-laptop  writer  \(fingerprint)"))
        // The admin removes bob: re-key; bob's agent reads nothing new.
        try Self.run(admin, ["team", "remove", "bob-laptop", "-k", "team:infra"])
        try Self.run(admin, ["add", "-k", "team:infra", "-s", "after", "-a", "x", "-w", "new-secret"])
        let refused = try Self.run(
            bob, ["find", "-k", "team:infra", "-s", "after", "-a", "x", "-w"], expect: Int32(UInt8(truncatingIfNeeded: errSecRestrictedAPI)))
        #expect(!refused.stdout.contains("new-secret"))
        #expect(refused.stderr.contains("admin-laptop removed it"))
        let head = try Self.run(admin, ["team", "head", "-k", "team:infra"]).stdout
        #expect(head.split(separator: ":").count == 2)
        #expect(try Self.run(admin, ["team", "verify", "-k", "team:infra"]).stdout.contains("3 items"))
    }

    @Test func aRunnerTokenUnlocksAReaderInCI() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, _) = try Self.admin(dsn)
        try Self.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", "deploy-token"])
        let token = try Self.run(admin, ["team", "add-runner", "ci-prod", "-k", "team:infra", "--role", "reader", "--expires", "90d"]).stdout
        #expect(token.hasPrefix("kcr1:"))
        let runner = try KCHome()
        let tokenFile = runner.directory + "/kc-token"
        try token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        try Self.run(runner, ["unlock", "--team-token-file", tokenFile], password: nil)
        let env = ["KC_KEYCHAIN": "team:infra"]
        #expect(try Self.run(runner, ["find", "-s", "deploy", "-a", "ci", "-w"], password: nil, extra: env).stdout == "deploy-token")
        let run = try Self.run(
            runner, ["run", "--no-masking", "--env", "TOKEN=kc://deploy/ci", "--", "/bin/sh", "-c", "echo \"$TOKEN\"; env"], password: nil, extra: env)
        #expect(run.stdout.hasPrefix("deploy-token\n"))
        #expect(!run.stdout.contains("kcr1:"), "the runner token never reaches a child process")
        // A reader's write: errSecReadOnly, and nothing changes.
        let write = try Self.run(
            runner, ["add", "-s", "x", "-a", "y", "-w", "z"], password: nil, expect: Int32(UInt8(truncatingIfNeeded: errSecReadOnly)), extra: env)
        #expect(write.stderr.contains("reader"))
        #expect(try Self.run(admin, ["team", "verify", "-k", "team:infra"]).stdout.contains("1 items"))
    }
}

/// Eight devices, each with its own team agent, add fifty items each at once through `kc
/// add`: 400 items, and the log verifies (issue 20, "Concurrency").
@Suite struct TeamAgentsConcurrencyTests {
    @Test func eightAgentsTimesFiftyAddsLeaveFourHundredItems() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, join) = try TeamCommandTests.admin(dsn)
        var homes: [KCHome] = []
        for i in 0..<8 {
            let home = try KCHome()
            let joined = try TeamCommandTests.run(home, ["team", "join", join, "--member", "device-\(i)", "--kdf", "interactive"])
            try TeamCommandTests.run(
                admin, ["team", "add", "device-\(i)", "--key", joined.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "-k", "team:infra"])
            try TeamCommandTests.run(home, ["unlock", "-k", "team:infra"])
            homes.append(home)
        }
        nonisolated(unsafe) let devices = homes
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { d in
            for i in 0..<50 {
                do {
                    let out = try devices[d].kc(["add", "-k", "team:infra", "-s", "d\(d)", "-a", "i\(i)", "-w", "s-\(d)-\(i)"])
                    if out.status != 0 { failures.append("device \(d) item \(i): exit \(out.status) \(out.stderr)") }
                } catch {
                    failures.append("device \(d) item \(i): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        #expect(try TeamCommandTests.run(admin, ["team", "verify", "-k", "team:infra"]).stdout.contains("400 items"))
        let listed = try TeamCommandTests.run(homes[3], ["list", "-k", "team:infra"]).stdout
        #expect(listed.split(separator: "\n").count == 400)
    }
}
