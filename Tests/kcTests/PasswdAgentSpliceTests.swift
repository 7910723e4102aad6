import Foundation
import Testing
@testable import KeychainCore
import KCTestSupport

/// The file attacker against a running agent across `kc passwd` (issue 29, found attacking
/// item 14's fix): it kept a copy of the file from before the change and knows the old
/// password, so it holds the old master key and every key derived from it. `kc passwd`
/// runs in its own process; an agent that unlocked the file before holds the old master
/// key until it next reads the file. Nothing inside the file can tell that agent a forged
/// file from a real one, since the attacker holds every key the agent holds: the old copy
/// put back in place (`FileSplicer`, every table), with a header under the old key at a
/// generation above the live one, is accepted, and what the user then adds through the
/// agent is sealed under the old master key. So `kc passwd` makes the agent let go of the
/// keychain before it replaces the master key (docs/security.md, "What an old password
/// still opens").
@Suite struct PasswdAgentSpliceTests {
    static let oldPassword = "old password"
    static let newPassword = "new password"

    @Test func anAgentThatHeldTheOldMasterKeyDoesNotServeAForgedFileAfterPasswd() throws {
        let h = try KCHome()
        let live = h.directory + "/live.keychain-db"
        let noAgent = ["KC_AGENT_DIR": h.directory + "/no-agent"]
        func ok(_ out: KCBinary.Output, _ what: String) throws {
            try #require(out.status == 0, "\(what): \(out.status) \(out.stderr)")
        }
        try ok(try h.kc(["create", "--kdf", "interactive", "-k", live], password: Self.oldPassword, extra: noAgent), "create")
        try ok(try h.kc(["unlock", "-k", live], password: Self.oldPassword), "unlock")
        try ok(try h.kc(["add", "-k", live, "-s", "deploy", "-a", "prod", "-w", "prod-1"]), "add")
        try ok(try h.kc(["add", "-k", live, "-s", "backup", "-a", "cron", "--accessible", "ck", "-w", "cron-1"]), "add ck")
        let old = h.directory + "/old.keychain-db"
        try FileSplicer.sqlite(live, "VACUUM INTO '\(old)';")
        chmod(old, 0o600)

        // The user changes the password (a re-key, the default) while the agent holds the file.
        try ok(try h.kc(["passwd", "-k", live], password: Self.oldPassword, extra: ["KC_NEW_PASSWORD": Self.newPassword]), "passwd")

        // The attacker: the old copy put back in place (same inode: the agent's connection
        // reads it), its header re-made under the old master key at a higher generation.
        let splicer = FileSplicer(live: live, old: old)
        let liveGeneration = try FileSplicer.sqlite(live, "SELECT generation FROM kc_state;")
        let every = try #require(try splicer.splices().first { $0.name.hasPrefix("every table") })
        try splicer.apply(every, to: live)
        let stale = try SQLiteItemStore(openingExisting: old)
        let oldRecord = try stale.transaction(write: false) { try stale.readKeychainRecord() }
        let (oldKeys, _) = try Keychain.unwrap(oldRecord, password: try SecureBytes(copying: Array(Self.oldPassword.utf8)), path: old)
        var state = try stale.transaction(write: false) { try stale.readState() }
        state.generation = (UInt64(liveGeneration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) + 100
        let mac = Header.mac(state, record: oldRecord, keys: oldKeys)
        try FileSplicer.sqlite(live, "UPDATE kc_state SET generation = \(state.generation), mac = X'\(Hex.encode(mac))';")

        // The agent must not serve the forged file, nor seal a new secret under the old key.
        var out = try h.kc(["find", "-k", live, "-s", "deploy", "-a", "prod", "-w"])
        #expect(out.status != 0 && out.stdout.isEmpty, "the agent served the forged file: \(out.status) \(out.stdout) \(out.stderr)")
        out = try h.kc(["find", "-k", live, "-s", "backup", "-a", "cron", "-w"])
        #expect(out.status != 0 && out.stdout.isEmpty, "the agent served an after-first-unlock item of the forged file: \(out.status) \(out.stdout)")
        out = try h.kc(["add", "-k", live, "-s", "new", "-a", "secret", "-w", "added-after-passwd"])
        #expect(out.status != 0, "the agent wrote into the forged file: \(out.stderr)")
        out = try h.kc(["find", "-k", live, "-s", "new", "-a", "secret", "-w"], password: Self.oldPassword, extra: noAgent)
        #expect(out.stdout.isEmpty, "the old password read a secret added after passwd: \(out.stdout)")
        // The user's new password is refused by the forged file: the substitution shows.
        out = try h.kc(["find", "-k", live, "-s", "deploy", "-a", "prod", "-w"], password: Self.newPassword, extra: noAgent)
        #expect(out.status == 51, "\(out.status) \(out.stderr)")
        _ = try? h.kc(["agent", "--stop"])
    }
}
