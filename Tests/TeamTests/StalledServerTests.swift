import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// A stalled server must not hold the keys in memory (issue 29, item 3; docs/team.md, "A
/// stalled server"): with the team unlocked in the real team agent and the server stalled
/// (`StalledServer`), `kc lock -k team:NAME` and `kc team agent --stop` answer at once and
/// the keys are gone; a read fails at its round-trip deadline with errSecNotAvailable.
@Suite struct StalledServerTests {
    static let secret = "stalled-deploy-token"
    static let lockedExit = Int32(UInt8(truncatingIfNeeded: errSecInteractionNotAllowed))
    static let unavailableExit = Int32(UInt8(truncatingIfNeeded: errSecNotAvailable))

    /// An admin home with team:infra at `dsn`, unlocked, holding one item.
    static func unlockedTeam(_ dsn: String, extra: [String: String] = [:]) throws -> KCHome {
        let home = try KCHome()
        try TeamCommandTests.run(home, ["team", "create", "infra", "--dsn", dsn, "--member", "admin", "--kdf", "interactive"])
        try TeamCommandTests.run(home, ["unlock", "-k", "team:infra"], extra: extra)
        try TeamCommandTests.run(home, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", secret])
        return home
    }

    /// A read started in the background (no password: it never unlocks by itself).
    static func backgroundRead(_ home: KCHome) throws -> SpawnedChild {
        try Spawn.start(
            [KCBinary.path, "find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"],
            environment: home.environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }, timeout: 60)
    }

    /// Waits (at most 10 s) until a session of `database` waits for a lock.
    static func waitForLockWaiter(_ database: String) throws -> Bool {
        for _ in 0..<100 {
            let n = try TestPostgres.shared.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND wait_event_type = 'Lock'", database: "postgres")
            if (Int(n.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0 { return true }
            usleep(100_000)
        }
        return false
    }

    /// After a lock or stop: the keychain is not held, and a read is refused as locked.
    static func expectKeysGone(_ home: KCHome) throws {
        let read = try home.kc(["find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"])
        #expect(read.status == lockedExit, "a read after the lock: \(read.status) \(read.stderr)")
        #expect(!read.stdout.contains(secret))
    }

    @Test func lockAnswersAtOnceWhileTheServerHoldsATableLock() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try Self.unlockedTeam(dsn)
        defer { _ = try? home.kc(["team", "agent", "--stop"]) }
        let lock = try StalledServer.TableLock(dsn: dsn)
        defer { lock.release() }
        let waiting = try Self.backgroundRead(home)
        #expect(try Self.waitForLockWaiter(TestPostgres.databaseName(of: dsn)), "the agent's read never waited for the lock")
        // The round-trip deadline is 30 s: a lock that answers within 5 s did not wait for it.
        let start = Date()
        let locked = try KCBinary.run(["lock", "-k", "team:infra"], environment: home.environment, timeout: 20)
        #expect(locked.status == 0, "kc lock: \(locked.status) \(locked.stderr)")
        #expect(Date().timeIntervalSince(start) < 5, "kc lock waited \(Date().timeIntervalSince(start)) s for the stalled server")
        // The read that was waiting ends too, without the secret.
        let ended = try waiting.finish()
        #expect(ended.status != 0 && !ended.stdout.contains(Self.secret), "\(ended.status) \(ended.stdout) \(ended.stderr)")
        try Self.expectKeysGone(home)
        lock.release()
        try Self.expectKeysGone(home)
    }

    /// A lock that arrives while an unlock waits for the server: answered at once, and the
    /// keys that unlock derived are revoked with its connection; nothing stays held.
    @Test func lockAnswersAtOnceWhileAnUnlockWaitsForTheServer() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try Self.unlockedTeam(dsn)
        defer { _ = try? home.kc(["team", "agent", "--stop"]) }
        try TeamCommandTests.run(home, ["lock", "-k", "team:infra"])
        let lock = try StalledServer.TableLock(dsn: dsn)
        defer { lock.release() }
        let unlocking = try Spawn.start(
            [KCBinary.path, "unlock", "-k", "team:infra"],
            environment: home.environment.merging(["PATH": "/usr/bin:/bin", "KC_PASSWORD": TeamCommandTests.teamPassword]) { a, _ in a },
            timeout: 60)
        #expect(try Self.waitForLockWaiter(TestPostgres.databaseName(of: dsn)), "the unlock never waited for the lock")
        let start = Date()
        let locked = try KCBinary.run(["lock", "-k", "team:infra"], environment: home.environment, timeout: 20)
        #expect(locked.status == 0, "kc lock: \(locked.status) \(locked.stderr)")
        #expect(Date().timeIntervalSince(start) < 5, "kc lock waited \(Date().timeIntervalSince(start)) s for the unlock")
        // It ends at once (its connection shut), not at its 30 s round-trip deadline
        // holding the keys it derived until then.
        let ended = try unlocking.finish()
        #expect(ended.status != 0, "the unlock the lock overtook succeeded: \(ended.stderr)")
        #expect(Date().timeIntervalSince(start) < 10, "the unlock held its keys \(Date().timeIntervalSince(start)) s after the lock")
        lock.release()
        try Self.expectKeysGone(home)
    }

    @Test func stopAnswersAtOnceWhileTheServerIsSilent() throws {
        let relay = try StalledServer.Relay(to: try TestPostgres.shared.port())
        defer { relay.stop() }
        let db = TestPostgres.databaseName(of: try TestPostgres.shared.newDatabase())
        let home = try Self.unlockedTeam("postgresql://postgres@127.0.0.1:\(relay.port)/\(db)")
        defer { _ = try? home.kc(["team", "agent", "--stop"]) }
        let lockFile = home.directory + "/agent/team-agent.lock"
        let pid = try #require(Int32((try String(contentsOfFile: lockFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        relay.goSilent()
        let waiting = try Self.backgroundRead(home)
        usleep(1_000_000)   // the read is now waiting for the silent server
        let start = Date()
        let stopped = try KCBinary.run(["team", "agent", "--stop"], environment: home.environment, timeout: 20)
        #expect(stopped.status == 0, "kc team agent --stop: \(stopped.status) \(stopped.stderr)")
        #expect(Date().timeIntervalSince(start) < 5, "the stop waited \(Date().timeIntervalSince(start)) s for the silent server")
        // The agent process ends (nothing of it holds the keys), and the waiting read with it.
        var gone = false
        for _ in 0..<100 where !gone { gone = kill(pid, 0) != 0; if !gone { usleep(50_000) } }
        #expect(gone, "the team agent \(pid) still runs after --stop")
        let ended = try waiting.finish()
        #expect(ended.status != 0 && !ended.stdout.contains(Self.secret), "\(ended.status) \(ended.stdout) \(ended.stderr)")
        try Self.expectKeysGone(home)
    }

    @Test func aReadAgainstAStalledServerFailsAtItsDeadline() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try Self.unlockedTeam(dsn, extra: ["KC_TEAM_ROUND_TRIP_TIMEOUT": "2"])
        defer { _ = try? home.kc(["team", "agent", "--stop"]) }
        let lock = try StalledServer.TableLock(dsn: dsn)
        defer { lock.release() }
        let start = Date()
        let read = try KCBinary.run(["find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"], environment: home.environment, timeout: 30)
        let took = Date().timeIntervalSince(start)
        #expect(read.status == Self.unavailableExit, "\(read.status) \(read.stderr)")
        #expect(read.stderr.contains("did not answer within 2.0 s"), "\(read.stderr)")
        #expect(took >= 2 && took < 10, "the read took \(took) s against a 2 s deadline")
        // The server answers again: so does the keychain, still unlocked.
        lock.release()
        let again = try TeamCommandTests.run(home, ["find", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w"], password: nil)
        #expect(again.stdout == Self.secret)
    }

    /// The connection itself, against a listener that accepts and never answers, and
    /// against a server that answered the startup and then went silent.
    @Test func aConnectionNeverWaitsPastItsDeadline() throws {
        let silent = try StalledServer.Silent()
        defer { silent.stop() }
        var start = Date()
        #expect(throws: KeychainError.self) { _ = try PostgresConnection(dsn: silent.dsn, connectTimeout: 2) }
        #expect(Date().timeIntervalSince(start) < 6)
        let relay = try StalledServer.Relay(to: try TestPostgres.shared.port())
        defer { relay.stop() }
        let db = TestPostgres.databaseName(of: try TestPostgres.shared.newDatabase())
        let c = try PostgresConnection(dsn: "postgresql://postgres@127.0.0.1:\(relay.port)/\(db)")
        c.roundTripTimeout = 1
        #expect(try c.execute("SELECT 1::int4").int64(0, 0) == 1)
        relay.goSilent()
        start = Date()
        var caught: KeychainError?
        do { try c.execute("SELECT 2::int4") } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecNotAvailable)
        #expect(caught?.message.contains("did not answer within 1.0 s") == true, "\(String(describing: caught))")
        #expect(c.timedOut && c.isBroken)
        #expect(Date().timeIntervalSince(start) < 1 + PostgresConnection.cancelWait + 2)
    }
}
