import Foundation
import Testing
@testable import KeychainCore
import POSIXSupport
import KCTestSupport

/// Accessibility classes with Apple's meaning (issue 18): after-first-unlock items stay
/// readable through the agent after `kc lock` and auto-lock, until the agent stops or the
/// boot changes; when-unlocked items do not. Through the real binary and a real agent.
@Suite struct AccessibilityClassTests {
    /// A keychain with a cron job's token (after first unlock) and a when-unlocked secret,
    /// unlocked in the agent.
    static func cronHome(timeout: Int? = nil) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["add", "-s", "backup", "-a", "cron", "--accessible", "after-first-unlock", "-w", "cron-token"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["add", "-s", "deploy", "-a", "prod", "-w", "prod-token"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["unlock"] + (timeout.map { ["--timeout", String($0)] } ?? []), password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        return h
    }

    /// `kc find -w` with no password source at all, as a cron job runs it.
    static func find(_ h: KCHome, _ service: String, _ account: String) throws -> KCBinary.Output {
        try h.kc(["find", "-s", service, "-a", account, "-w"])
    }

    /// The cron-job case of issue 18's "Done when": after `kc lock`, the after-first-unlock
    /// item reads and the when-unlocked one does not; after the agent restarts, neither.
    @Test func theCronJobReadsItsTokenAfterLockAndNotAfterTheAgentRestarts() throws {
        let h = try Self.cronHome()
        #expect(try Self.find(h, "backup", "cron").stdout == "cron-token")
        #expect(try Self.find(h, "deploy", "prod").stdout == "prod-token")
        #expect(try h.kc(["lock"]).status == 0)
        var out = try Self.find(h, "backup", "cron")
        #expect(out.status == 0 && out.stdout == "cron-token", "\(out.stderr)")
        out = try Self.find(h, "deploy", "prod")
        #expect(out.status == 36 && out.stdout.isEmpty)
        #expect(out.stderr.contains("is locked"))
        // A search that reaches a when-unlocked item needs the unlock, as every locked keychain does.
        #expect(try h.kc(["find", "-s", "deploy"]).status == 36)
        // And so does one that finds nothing: "no such item" would tell a process of this
        // user that no when-unlocked item has the account it guessed (the review's oracle).
        for guess in [["-s", "deploy", "-a", "prod"], ["-s", "deploy", "-a", "nobody"], ["-a", "prod"], ["-a", "nobody"]] {
            let answer = try h.kc(["find"] + guess)
            #expect(answer.status == 36 && answer.stdout.isEmpty, "\(guess): \(answer.status) \(answer.stderr)")
        }
        #expect(try h.kc(["list"]).status == 36)
        // Locked means locked for `kc status`, and for writes (read-only: docs/security.md).
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
        #expect(try h.kc(["add", "-s", "new", "-a", "x", "--accessible", "after-first-unlock", "-w", "v"]).status == 36)
        #expect(try h.kc(["update", "-s", "backup", "-a", "cron", "-w", "changed"]).status == 36)
        #expect(try h.kc(["delete", "-s", "backup", "-a", "cron"]).status == 36)
        // `kc verify` opens every item: it needs every class key.
        #expect(try h.kc(["verify"]).status == 36)
        #expect(try Self.find(h, "backup", "cron").stdout == "cron-token")
        // The attributes of the after-first-unlock item read too, by name.
        out = try h.kc(["find", "-s", "backup", "-a", "cron"])
        #expect(out.status == 0 && out.stdout.contains("accessible: after-first-unlock\n"), "\(out.stderr)")
        // With the password given, a locked keychain opens here as it always did.
        #expect(try h.kc(["find", "-s", "deploy", "-a", "prod", "-w"], password: KCHome.password).stdout == "prod-token")
        // The agent restarts: nothing of the first unlock is left.
        #expect(try h.kc(["agent", "--stop"]).status == 0)
        #expect(try Self.find(h, "backup", "cron").status == 36)
        #expect(try Self.find(h, "deploy", "prod").status == 36)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try Self.find(h, "backup", "cron").stdout == "cron-token")
        #expect(try Self.find(h, "deploy", "prod").stdout == "prod-token")
    }

    /// Auto-lock (the idle timeout) keeps the after-first-unlock item readable too.
    @Test func theCronJobReadsItsTokenAfterAutoLock() throws {
        let h = try Self.cronHome(timeout: 2)
        #expect(try Self.find(h, "deploy", "prod").stdout == "prod-token")
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
        #expect(try Self.find(h, "deploy", "prod").status == 36, "locked after 2 s without use")
        let out = try Self.find(h, "backup", "cron")
        #expect(out.status == 0 && out.stdout == "cron-token", "\(out.stderr)")
        // Reads of a locked keychain do not unlock it again.
        #expect(try Self.find(h, "deploy", "prod").status == 36)
    }

    /// A keychain without after-first-unlock items is forgotten entirely at lock, as before.
    @Test func aKeychainWithoutSuchItemsIsForgottenAtLock() throws {
        let h = try KCHome()
        h.environment["KC_AGENT_GRACE"] = "1"
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "deploy", "-a", "prod", "-w", "prod-token"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
        var gone = false
        for _ in 0..<60 where !gone {
            Thread.sleep(forTimeInterval: 0.1)
            gone = !FileManager.default.fileExists(atPath: h.directory + "/agent/agent.sock")
        }
        #expect(gone, "the agent leaves after its grace period: it holds nothing")
    }

    /// An attacker who flips the protection class in the file while the agent holds the
    /// keychain locked: the row does not open (the class is bound into its associated data
    /// and accumulator term), and no secret is printed.
    @Test(arguments: ["1", "0"])
    func aFlippedClassColumnFailsTheRead(to value: String) throws {
        let h = try Self.cronHome()
        #expect(try h.kc(["lock"]).status == 0)
        let which = value == "0" ? "pclass = 1" : "pclass = 0"
        _ = try Spawn.run(["/usr/bin/sqlite3", h.defaultKeychain, "UPDATE kc_items SET pclass = \(value) WHERE \(which)"], environment: [:])
        #expect(
            try Spawn.run(["/usr/bin/sqlite3", h.defaultKeychain, "SELECT count(*) FROM kc_items WHERE pclass = \(value)"], environment: [:]).stdout == "2\n")
        for (service, account) in [("backup", "cron"), ("deploy", "prod")] {
            let out = try Self.find(h, service, account)
            #expect(out.status != 0 && out.stdout.isEmpty, "\(service): \(out.stdout)")
        }
        // Opened with the password, the file is refused as tampered with.
        let out = try h.kc(["find", "-s", "backup", "-a", "cron", "-w"], password: KCHome.password)
        #expect(out.status == Int32(UInt8(truncatingIfNeeded: errSecDecode)) && out.stdout.isEmpty, "\(out.stderr)")
    }

    /// `--accessible` takes the names `kc find` prints and Apple's codes; `always` is
    /// stored and warned about; `--new-accessible` moves an item between class keys.
    @Test func theAccessibleFlags() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["add", "-s", "old", "-a", "x", "--accessible", "always", "-w", "v"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("'always' is deprecated by Apple; kc protects it as after-first-unlock"), "\(out.stderr)")
        out = try h.kc(["find", "-s", "old", "-a", "x"], password: KCHome.password)
        #expect(out.stdout.contains("accessible: always\n"))
        out = try h.kc(["add", "-s", "code", "-a", "x", "--accessible", "cku", "-w", "v"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        out = try h.kc(["find", "-s", "code", "-a", "x", "--json"], password: KCHome.password)
        #expect(out.stdout.contains("\"accessible\":\"cku\""), "\(out.stdout)")
        out = try h.kc(["add", "-s", "bad", "-a", "x", "--accessible", "sometimes", "-w", "v"], password: KCHome.password)
        #expect(out.status == 2 && out.stderr.contains("sometimes"))
        // An item that was when-unlocked moves to after-first-unlock and back.
        #expect(try h.kc(["add", "-s", "svc", "-a", "x", "-w", "moving"], password: KCHome.password).status == 0)
        let classOf = {
            try Spawn.run(["/usr/bin/sqlite3", h.defaultKeychain, "SELECT pclass FROM kc_items ORDER BY seq DESC LIMIT 1"], environment: [:]).stdout
        }
        #expect(try classOf() == "0\n")
        out = try h.kc(["update", "-s", "svc", "-a", "x", "--new-accessible", "after-first-unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try classOf() == "1\n")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
        #expect(try Self.find(h, "svc", "x").stdout == "moving")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["update", "-s", "svc", "-a", "x", "--new-accessible", "when-unlocked"]).status == 0)
        #expect(try classOf() == "0\n")
        #expect(try h.kc(["lock"]).status == 0)
        #expect(try Self.find(h, "svc", "x").status == 36)
    }

    /// Items accessible on this device only never leave it: every export format leaves
    /// them out and counts them on stderr; a backup (this device's own copy) keeps them.
    @Test(arguments: ["json", "csv", "bitwarden-json"])
    func exportLeavesOutThisDeviceOnlyItems(format: String) throws {
        let h = try KCHome()
        try h.createKeychain()
        for (service, accessible) in [
            ("shared", "when-unlocked"), ("device", "when-unlocked-this-device-only"),
            ("device2", "after-first-unlock-this-device-only"), ("moving", "after-first-unlock")
        ] {
            #expect(try h.kc(["add", "-s", service, "-a", "x", "--accessible", accessible, "-w", "\(service)-secret"], password: KCHome.password).status == 0)
        }
        let out = try h.kc(["export", "--format", format], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("left out 2 items accessible on this device only"), "\(out.stderr)")
        #expect(out.stdout.contains("shared") && out.stdout.contains("moving"))
        #expect(!out.stdout.contains("device"), "\(out.stdout)")
        if format == "json" {
            let backup = h.directory + "/copy.keychain-db"
            #expect(try h.kc(["backup", backup], password: KCHome.password).status == 0)
            #expect(try h.kc(["find", "-k", backup, "-s", "device", "-w"], password: KCHome.password).stdout == "device-secret")
        }
    }

    /// The agent's reboot decision (`BootSession`): the same boot id and a clock that did
    /// not go back is the same boot; anything else forgets every key.
    @Test func aChangedBootForgetsEverything() throws {
        let now = BootSession.current()
        #expect(now.bootID.count == 37 && now.bootID.last == 0x0A, "boot id \(now.bootID)")
        #expect(now.isSameBoot(as: .current()))
        let later = BootSession(bootID: now.bootID, bootTime: now.bootTime + 1_000_000_000)
        #expect(now.isSameBoot(as: later))
        var other = now.bootID
        other[0] = other[0] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        #expect(!now.isSameBoot(as: BootSession(bootID: other, bootTime: later.bootTime)), "another boot id")
        #expect(!now.isSameBoot(as: BootSession(bootID: now.bootID, bootTime: now.bootTime - 1)), "CLOCK_BOOTTIME went back")
        #expect(!now.isSameBoot(as: BootSession(bootID: [], bootTime: later.bootTime)), "an id that can no longer be read")
        #expect(!BootSession(bootID: [], bootTime: 0).isSameBoot(as: later), "an id that could not be read before")
        #expect(!BootSession(bootID: [], bootTime: 0).isSameBoot(as: BootSession(bootID: [], bootTime: 1)), "unreadable then and now is no proof of one boot")
    }
}
