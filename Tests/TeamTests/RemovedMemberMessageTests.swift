import Foundation
import Testing
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A removed member was told "wrong password" (exit 51): it gets its own status,
/// errSecRestrictedAPI (exit 28), and a message naming the admin who removed it and when
/// (issue 32, "Messages and exit codes"). Only a removal the signed log proves says so: what
/// the server alone can do (a forged roster entry, a deleted master-key wrap) keeps the
/// answers it had. The real `kc`, `kc-team` and team agent against the real PostgreSQL.
@Suite struct RemovedMemberMessageTests {
    static let removedExit = Int32(UInt8(truncatingIfNeeded: errSecRestrictedAPI))
    static let wrongPasswordExit = Int32(UInt8(truncatingIfNeeded: errSecAuthFailed))
    /// `… admin-laptop removed it at 2026-11-26T20:01:02Z …`
    static var removal: Regex<(Substring, Substring)> { /no longer a member of team:infra: admin-laptop removed it at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/ }

    /// An admin and bob, a writer whose team agent holds team:infra.
    static func adminAndBob(_ dsn: String) throws -> (admin: KCHome, bob: KCHome, join: String) {
        let (admin, join) = try TeamCommandTests.admin(dsn)
        let bob = try KCHome()
        let fingerprint = try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob-laptop", "--kdf", "interactive"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try TeamCommandTests.run(admin, ["team", "add", "bob-laptop", "--key", fingerprint, "-k", "team:infra"])
        try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"])
        return (admin, bob, join)
    }

    /// The admin removes bob: bob's running agent, bob's next unlock (a first open, the whole
    /// log walked) and bob's `kc team members` each exit 28 naming the admin and the time
    /// of the removal; a wrong team password is still exit 51.
    @Test func aRemovedMemberIsToldWhoRemovedItAndWhen() throws {
        let (admin, bob, _) = try Self.adminAndBob(try TestPostgres.shared.newDatabase())
        try TeamCommandTests.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", "before"])
        let before = Date()
        try TeamCommandTests.run(admin, ["team", "remove", "bob-laptop", "-k", "team:infra"])
        // Bob's agent catches up across the removal.
        let read = try TeamCommandTests.run(bob, ["find", "-k", "team:infra", "-s", "deploy", "-w"], expect: Self.removedExit)
        #expect(read.stdout.isEmpty)
        let match = try #require(read.stderr.firstMatch(of: Self.removal), "\(read.stderr)")
        let when = try #require(ISO8601DateFormatter().date(from: String(match.1)))
        #expect(abs(when.timeIntervalSince(before)) < 60, "the time of the removal: \(match.1)")
        #expect(!read.stderr.contains("password"), "\(read.stderr)")
        // As of the head the server served (a server may serve an old genuine prefix of the
        // log): the message names its generation, and the hint says to confirm first.
        let head = try TeamCommandTests.run(admin, ["team", "head", "-k", "team:infra"]).stdout.split(separator: ":").first ?? ""
        #expect(read.stderr.contains("(as of generation \(head), the log the server served)"), "\(read.stderr)")
        #expect(read.stderr.contains("confirm with an admin (`kc team members` on their device) before joining anew"), "\(read.stderr)")
        // A first open walks the signed log and finds the same removal.
        try TeamCommandTests.run(bob, ["lock", "-k", "team:infra"])
        let unlock = try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"], expect: Self.removedExit)
        #expect(unlock.stderr.contains(match.0), "\(unlock.stderr)")
        let members = try TeamCommandTests.run(bob, ["team", "members", "-k", "team:infra"], expect: Self.removedExit)
        #expect(members.stderr.contains("kc-team: this device is no longer a member of team:infra"), "\(members.stderr)")
        // The password is not what failed, and a wrong one is still exit 51.
        let wrong = try bob.kc(["unlock", "-k", "team:infra"], password: "not the team password")
        #expect(wrong.status == Self.wrongPasswordExit, "\(wrong.status) \(wrong.stderr)")
        #expect(wrong.stderr.contains("wrong team password"), "\(wrong.stderr)")
        // `kc error 28` names the status.
        let named = try KCBinary.run(["error", "28"])
        #expect(named.stdout.contains("errSecRestrictedAPI") || named.stdout.contains("-34020"), "\(named.stdout)")
        #expect(named.stdout.contains("not permitted to perform this operation"), "\(named.stdout)")
    }

    /// The admin removes bob and adds the same device back (its join request put back, as a
    /// server that kept the row would): bob's running agent catches up across both entries
    /// and reads on (it reported "removed", exit 28, at the first entry that dropped it).
    /// A removal that stays is still exit 28.
    @Test func aDeviceRemovedAndAddedBackReadsOn() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, join) = try TeamCommandTests.admin(dsn)
        let bob = try KCHome()
        let fingerprint = try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob-laptop", "--kdf", "interactive"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let requests = try PostgresConnection(dsn: dsn).execute("SELECT keychain_id, request FROM kc_requests WHERE fingerprint = $1", [.text(fingerprint)])
        let keychainID = try #require(requests.bytes(0, 0)), request = try #require(requests.bytes(0, 1))
        try TeamCommandTests.run(admin, ["team", "add", "bob-laptop", "--key", fingerprint, "-k", "team:infra"])
        try TeamCommandTests.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "ci", "-w", "before"])
        try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"])
        try TeamCommandTests.run(admin, ["team", "remove", "bob-laptop", "-k", "team:infra"])
        _ = try PostgresConnection(dsn: dsn).execute(
            "INSERT INTO kc_requests (keychain_id, fingerprint, request) VALUES ($1, $2, $3)", [.bytes(keychainID), .text(fingerprint), .bytes(request)])
        try TeamCommandTests.run(admin, ["team", "add", "bob-laptop", "--key", fingerprint, "-k", "team:infra"])
        try TeamCommandTests.run(admin, ["add", "-k", "team:infra", "-s", "deploy", "-a", "cd", "-w", "after"])
        let listed = try TeamCommandTests.run(bob, ["list", "-k", "team:infra"])
        #expect(listed.stdout.contains("deploy\tci") && listed.stdout.contains("deploy\tcd"), "\(listed.stdout)")
        let found = try TeamCommandTests.run(bob, ["find", "-k", "team:infra", "-s", "deploy", "-a", "cd", "-w"])
        #expect(found.stdout.hasPrefix("after"), "\(found.stdout) \(found.stderr)")
        // Removed again, for good: exit 28.
        try TeamCommandTests.run(admin, ["team", "remove", "bob-laptop", "-k", "team:infra"])
        let removed = try TeamCommandTests.run(bob, ["list", "-k", "team:infra"], expect: Self.removedExit)
        #expect(removed.stderr.firstMatch(of: Self.removal) != nil, "\(removed.stderr)")
    }

    /// A device that asked to join and was never added is not "removed": exit 51 as before,
    /// with the hint to have it added.
    @Test func aDeviceNeverAddedKeepsTheOldAnswer() throws {
        let (_, join) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let carol = try KCHome()
        try TeamCommandTests.run(carol, ["team", "join", join, "--member", "carol", "--kdf", "interactive"])
        let refused = try TeamCommandTests.run(carol, ["unlock", "-k", "team:infra"], expect: Self.wrongPasswordExit)
        #expect(refused.stderr.contains("is not a member of team:infra"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("removed it"), "\(refused.stderr)")
    }

    /// The hostile server writes a roster entry without bob, signed by a reader runner (a
    /// genuine member, not an admin): bob's agent and bob's first open name a forged member
    /// list (exit 49), never a removal. Then it deletes bob's master-key wrap and member row
    /// (and the forged entry): bob's first open is exit 51 as before, not 28.
    @Test func whatTheServerAloneDoesIsNeverCalledARemoval() throws {
        let team = try HostileServerTests.Team()
        let bob = try team.device("bob-laptop")
        let reader = try team.runner("ci-read", role: "reader")
        let headBefore = try team.server.head()
        try Self.appendRosterWithout("bob-laptop", signedBy: reader.keys, team)
        let live = try TeamCommandTests.run(bob, ["find", "-k", "team:infra", "-s", "first", "-w"], expect: HostileServerTests.exit(errSecInvalidKeychain))
        #expect(live.stderr.contains("not signed by an admin"), "\(live.stderr)")
        #expect(!live.stderr.contains("no longer a member") && !live.stderr.contains("removed it"), "\(live.stderr)")
        try TeamCommandTests.run(bob, ["lock", "-k", "team:infra"])
        let first = try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"], expect: HostileServerTests.exit(errSecInvalidKeychain))
        #expect(!first.stderr.contains("no longer a member") && !first.stderr.contains("removed it"), "\(first.stderr)")
        // The forged entry gone again, bob's wrap and member row deleted: no signed removal.
        try Self.restoreHead(headBefore, team)
        let bobID = try Self.memberID(of: "bob-laptop", team)
        _ = try PostgresConnection(dsn: team.server.dsn).execute("DELETE FROM kc_mk_wraps WHERE member_id = $1", [.bytes(bobID)])
        _ = try PostgresConnection(dsn: team.server.dsn).execute("DELETE FROM kc_members WHERE member_id = $1", [.bytes(bobID)])
        let noWrap = try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"], expect: Self.wrongPasswordExit)
        #expect(noWrap.stderr.contains("holds no master key for this device"), "\(noWrap.stderr)")
        #expect(!noWrap.stderr.contains("no longer a member"), "\(noWrap.stderr)")
    }

    // MARK: - The hostile server's moves

    /// The member id of `name` in the server's member table.
    static func memberID(of name: String, _ team: HostileServerTests.Team) throws -> [UInt8] {
        let rows = try PostgresConnection(dsn: team.server.dsn).execute("SELECT record FROM kc_members")
        let records = try (0..<rows.rowCount).compactMap { try rows.bytes($0, 0).map(MemberRecord.init(encoded:)) }
        return try #require(records.first { $0.name == name }).memberID
    }

    /// Appends a roster entry leaving `name` out, signed by `keys` (not an admin), linked to
    /// the head, and makes it the head.
    static func appendRosterWithout(_ name: String, signedBy keys: MemberKeys, _ team: HostileServerTests.Team) throws {
        let folder = NSTemporaryDirectory() + "/kc-forger-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let id = try team.keychainID
        let a = try TeamKeychains.connect(name: "infra", keychainID: id, dsn: team.server.dsn, insecure: false, member: keys, checkpoints: folder)
            .authority
        let without = try Roster(a.roster.members.filter { $0.name != name })
        var e = LogEntry(
            kind: .roster, generation: a.generation + 1, previous: a.head, keyGeneration: a.keyGeneration, signer: keys.memberID,
            time: max(TeamAuthority.now, a.lastTime), roster: without, masterKeyCommitment: a.commitment, previousRoster: a.rosterEntryHash,
            setDigest: a.set.digest, count: UInt64(a.ledger.count), rosterDigest: without.digest)
        e.sign(keychainID: id, with: keys)
        let c = try PostgresConnection(dsn: team.server.dsn)
        _ = try c.execute(
            "INSERT INTO kc_log (keychain_id, generation, kind, entry) VALUES ($1, $2, $3, $4)",
            [.bytes(id), .int64(Int64(e.generation)), .int64(Int64(LogEntry.Kind.roster.rawValue)), .bytes(e.encoded)])
        _ = try c.execute(
            "UPDATE kc_keychains SET generation = $1, head = $2 WHERE keychain_id = $3", [.int64(Int64(e.generation)), .bytes(e.hash), .bytes(id)])
    }

    /// Puts the head `generation:hash` (as `kc team head` prints it) back on the server.
    static func restoreHead(_ text: String, _ team: HostileServerTests.Team) throws {
        let parts = text.split(separator: ":")
        let generation = try #require(parts.first.flatMap { Int64($0) })
        let hash = try #require(parts.last.flatMap { Hex.decode(String($0)) })
        let c = try PostgresConnection(dsn: team.server.dsn)
        _ = try c.execute("DELETE FROM kc_log WHERE generation > $1", [.int64(generation)])
        _ = try c.execute("UPDATE kc_keychains SET generation = $1, head = $2", [.int64(generation), .bytes(hash)])
    }
}
