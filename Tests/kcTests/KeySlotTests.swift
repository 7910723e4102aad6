import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// Key slots (issue 35) through the real `kc`: a recovery key added with `kc keyslot add
/// --recovery` opens the keychain in the agent (`kc unlock --recovery`), typed with or
/// without its dashes; a wrong one does not; `kc passwd --keep-master-key` keeps it and a
/// re-key removes it, saying so; and a slot spliced in from an older copy, added by writing
/// the table or edited is refused, while an older copy keeps opening with a slot the live
/// file removed (docs/security.md, "Key slots").
@Suite struct KeySlotTests {
    static let modhex = Set("cbdefghijklnrtuv")

    /// A home with a keychain file of one item, and its path.
    static func keychain() throws -> (KCHome, String) {
        let h = try KCHome()
        let path = h.directory + "/slots.keychain-db"
        var out = try h.kc(["create", "--kdf", "interactive", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        try #require(out.status == 0, "\(out.stderr)")
        out = try h.kc(["add", "-k", path, "-s", "deploy", "-a", "prod", "-w", "prod-token"], password: KCHome.password, extra: Self.noAgent(h))
        try #require(out.status == 0, "\(out.stderr)")
        return (h, path)
    }

    /// The environment of a kc that opens the file in its own process (no agent).
    static func noAgent(_ h: KCHome) -> [String: String] { ["KC_AGENT_DIR": h.directory + "/no-agent"] }

    /// Adds a recovery slot with the real kc and answers the key as it printed it.
    static func addRecovery(_ h: KCHome, _ path: String) throws -> String {
        let out = try h.kc(["keyslot", "add", "--recovery", "-k", path], password: KCHome.password, extra: noAgent(h))
        try #require(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("shown once"), "the one-line warning: \(out.stderr)")
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        let key = out.stdout.trimmingCharacters(in: .newlines)
        let groups = key.split(separator: "-", omittingEmptySubsequences: false)
        #expect(groups.count == 8 && groups.allSatisfy { $0.count == 8 && $0.allSatisfy(Self.modhex.contains) }, "8 groups of 8 modhex: \(key)")
        return key
    }

    /// `kc unlock --recovery` with `key` on stdin, then a `kc find -w` with no password,
    /// through the agent; answers the unlock's exit and what the find printed.
    static func unlockAndFind(_ h: KCHome, _ path: String, key: String) throws -> (Int32, String) {
        _ = try h.kc(["lock", "--all"])
        let unlock = try h.kc(["unlock", "--recovery", "--password-stdin", "-k", path], stdin: Data(key.utf8))
        guard unlock.status == 0 else { return (unlock.status, unlock.stderr) }
        let find = try h.kc(["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"])
        #expect(find.status == 0, "\(find.stderr)")
        return (0, find.stdout)
    }

    @Test func aRecoveryKeyUnlocksWithOrWithoutDashesAndAWrongOneDoesNot() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        var (status, found) = try Self.unlockAndFind(h, path, key: key)
        #expect(status == 0 && found == "prod-token", "\(status) \(found)")
        let bare = key.replacingOccurrences(of: "-", with: "").uppercased()
        (status, found) = try Self.unlockAndFind(h, path, key: bare + "\n")
        #expect(status == 0 && found == "prod-token", "without dashes, upper case: \(status) \(found)")
        let spaced = key.replacingOccurrences(of: "-", with: " ")
        (status, found) = try Self.unlockAndFind(h, path, key: spaced)
        #expect(status == 0 && found == "prod-token", "with spaces: \(status) \(found)")
        // A wrong key of the right shape: the first character changed.
        let first = key.first!
        let other = Self.modhex.first { $0 != first }!
        (status, found) = try Self.unlockAndFind(h, path, key: String(other) + key.dropFirst())
        #expect(status == 51, "a wrong recovery key: \(status) \(found)")
        let locked = try h.kc(["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"])
        #expect(locked.status != 0 && locked.stdout.isEmpty, "nothing unlocked: \(locked.status)")
        (status, found) = try Self.unlockAndFind(h, path, key: String(key.dropLast()))
        #expect(status == 206, "not a recovery key: \(status) \(found)")
        // The password is no recovery key.
        (status, found) = try Self.unlockAndFind(h, path, key: KCHome.password)
        #expect(status == 206, "\(status) \(found)")
    }

    /// On a terminal the recovery key is asked for with echo off, and its text never shows.
    @Test func theRecoveryKeyIsTypedAtAPromptWithEchoOff() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path
        let spec: [String: Any] = [
            "argv": [KCBinary.path, "unlock", "--recovery", "-k", path], "env": h.environment.merging(["TERM": "dumb", "PATH": "/usr/bin:/bin"]) { a, _ in a },
            "steps": [["expect", "Recovery key for keychain \(path): "], ["send", key + "\n"]], "answers": [], "timeout": 30
        ]
        let file = h.directory + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 40)
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        let screen = session["screen"] as? String ?? ""
        #expect(session["status"] as? Int == 0, "\(screen) \(out.stderr)")
        #expect(session["echo_off"] as? [Bool] == [true], "\(session)")
        #expect(!screen.contains(String(key.prefix(8))), "the key is not echoed: \(screen)")
        let find = try h.kc(["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"])
        #expect(find.status == 0 && find.stdout == "prod-token", "\(find.stderr)")
    }

    /// An agent that keeps the keychain locked with an after-first-unlock item (so it holds
    /// the file open) is unlocked again with the recovery key through its own connection.
    @Test func aRecoveryKeyUnlocksAKeychainTheAgentKeepsLocked() throws {
        let (h, path) = try Self.keychain()
        var out = try h.kc(
            ["add", "-k", path, "-s", "cron", "-a", "job", "--accessible", "after-first-unlock", "-w", "cron-token"], password: KCHome.password,
            extra: Self.noAgent(h))
        try #require(out.status == 0, "\(out.stderr)")
        let key = try Self.addRecovery(h, path)
        out = try h.kc(["unlock", "-k", path], password: KCHome.password)
        try #require(out.status == 0, "\(out.stderr)")
        out = try h.kc(["lock", "-k", path])
        #expect(out.status == 0)
        out = try h.kc(["find", "-k", path, "-s", "cron", "-w"])
        #expect(out.status == 0 && out.stdout == "cron-token", "kept for after-first-unlock: \(out.stderr)")
        out = try h.kc(["unlock", "--recovery", "--password-stdin", "-k", path], stdin: Data(key.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"])
        #expect(out.status == 0 && out.stdout == "prod-token", "\(out.stderr)")
    }

    @Test func theListShowsNoSecretAndTheFileHoldsNone() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        var out = try h.kc(["keyslot", "list", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.count == 2 && lines[0] == ["1", "password", "-"] && lines[1].prefix(2) == ["2", "recovery"], "\(out.stdout)")
        #expect(lines.last?.last?.hasPrefix("20") == true, "a date: \(out.stdout)")
        out = try h.kc(["keyslot", "list", "--json", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        #expect(json.map { $0["kind"] as? String } == ["password", "recovery"] && json.map { $0["id"] as? Int } == [1, 2])
        #expect(json.allSatisfy { Set($0.keys) == ["id", "kind", "created"] }, "\(out.stdout)")
        let bare = key.replacingOccurrences(of: "-", with: "")
        for text in [out.stdout, out.stderr] { #expect(!text.contains(bare.prefix(16)), "no part of the key is shown") }
        // Nothing of the key in the file: neither its text nor its 32 bytes.
        _ = try FileSplicer.sqlite(path, "PRAGMA wal_checkpoint(TRUNCATE);")
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let alphabet = Array("cbdefghijklnrtuv")
        var raw: [UInt8] = []
        let chars = Array(bare)
        for i in stride(from: 0, to: 64, by: 2) {
            raw.append(UInt8(alphabet.firstIndex(of: chars[i])! << 4 | alphabet.firstIndex(of: chars[i + 1])!))
        }
        #expect(file.range(of: Data(raw)) == nil && file.range(of: Data(bare.utf8)) == nil, "the recovery key is not stored")
    }

    @Test func theListShowsATPM2SlotsPINAndPCRsAndNoSecret() throws {
        let (h, path) = try Self.keychain()
        let sealing = try TPM2Sealing(blob: TestTPMBlob.make(pin: true, pcrMask: 1 << 0 | 1 << 7))
        let k = try Keychain.open(at: path, password: try SecureBytes(copying: Array(KCHome.password.utf8)))
        var secret: [UInt8] = []
        #expect(
            try k.addTPM2Slot { made in
                secret = made.withUnsafeBytes { Array($0) }
                return sealing
            } == 2)
        var out = try h.kc(["keyslot", "list", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.count == 2 && lines[1].count == 4 && lines[1].prefix(2) == ["2", "tpm2"] && lines[1][3] == "pin: yes, pcrs: 0,7", "\(out.stdout)")
        out = try h.kc(["keyslot", "list", "--json", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        #expect(json.count == 2 && json[1]["pin"] as? Bool == true && json[1]["pcrs"] as? [Int] == [0, 7], "\(out.stdout)")
        #expect(json[0]["pin"] == nil, "no TPM2 fields on the password slot: \(out.stdout)")
        _ = try FileSplicer.sqlite(path, "PRAGMA wal_checkpoint(TRUNCATE);")
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.range(of: Data(secret)) == nil, "the TPM's secret is not stored")
    }

    @Test func theLastWayInCannotBeRemoved() throws {
        let (h, path) = try Self.keychain()
        var out = try h.kc(["keyslot", "remove", "1", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 206 && out.stderr.contains("password slot"), "\(out.status) \(out.stderr)")
        _ = try Self.addRecovery(h, path)
        out = try h.kc(["keyslot", "remove", "1", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 206, "never the password slot: \(out.status) \(out.stderr)")
        out = try h.kc(["keyslot", "remove", "7", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 44, "no slot 7: \(out.status) \(out.stderr)")
        out = try h.kc(["find", "-k", path, "-s", "deploy", "-w"], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0 && out.stdout == "prod-token")
    }

    @Test func passwdKeepsTheRecoverySlotAndARekeyRemovesItSayingSo() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        var out = try h.kc(
            ["passwd", "--keep-master-key", "-k", path], password: KCHome.password, extra: Self.noAgent(h).merging(["KC_NEW_PASSWORD": "second"]) { _, b in b })
        #expect(out.status == 0, "\(out.stderr)")
        var (status, found) = try Self.unlockAndFind(h, path, key: key)
        #expect(status == 0 && found == "prod-token", "the recovery key after kc passwd --keep-master-key: \(status) \(found)")
        _ = try h.kc(["lock", "--all"])
        out = try h.kc(["passwd", "-k", path], password: "second", extra: Self.noAgent(h).merging(["KC_NEW_PASSWORD": "third"]) { _, b in b })
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("removed key slot 2 (recovery)") && out.stderr.contains("kc keyslot add --recovery"), "\(out.stderr)")
        (status, found) = try Self.unlockAndFind(h, path, key: key)
        #expect(status == 51, "the removed recovery slot: \(status) \(found)")
        out = try h.kc(["keyslot", "list", "-k", path], password: "third", extra: Self.noAgent(h))
        #expect(out.stdout == "1\tpassword\t-\n", "\(out.stdout) \(out.stderr)")
    }

    /// The password is lost: `kc passwd --recovery` opens with the recovery key (on stdin)
    /// and sets a new password; with --keep-master-key the recovery key keeps working, and
    /// the re-key removes it, saying so. A wrong recovery key changes nothing (exit 51).
    @Test func theRecoveryKeySetsANewPasswordWhenItIsLost() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        let second = try Self.addRecovery(h, path)
        func passwd(_ extra: [String], key: String, new: String) throws -> KCBinary.Output {
            try h.kc(
                ["passwd", "--recovery", "--password-stdin", "-k", path] + extra, stdin: Data(key.utf8),
                extra: Self.noAgent(h).merging(["KC_NEW_PASSWORD": new]) { _, b in b })
        }
        let wrong = String(Self.modhex.first { $0 != key.first! }!) + key.dropFirst()
        var out = try passwd(["--keep-master-key"], key: wrong, new: "stolen")
        #expect(out.status == 51, "\(out.status) \(out.stderr)")
        out = try passwd(["--keep-master-key"], key: key, new: "found again")
        #expect(out.status == 0, "\(out.stderr)")
        let find = ["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"]
        out = try h.kc(find, password: "found again", extra: Self.noAgent(h))
        #expect(out.status == 0 && out.stdout == "prod-token", "the new password: \(out.stderr)")
        out = try h.kc(find, password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 51, "the old password: \(out.status)")
        let old = h.directory + "/old.keychain-db"
        _ = try FileSplicer.sqlite(path, "VACUUM INTO '\(old)';")
        chmod(old, 0o600)
        out = try passwd([], key: key, new: "third")
        #expect(out.status == 0 && out.stderr.contains("removed key slot 3 (recovery)"), "\(out.stderr)")
        #expect(!out.stderr.contains("removed key slot 2"), "the slot typed is kept: \(out.stderr)")
        out = try h.kc(find, password: "third", extra: Self.noAgent(h))
        #expect(out.status == 0 && out.stdout == "prod-token", "\(out.stderr)")
        var (status, found) = try Self.unlockAndFind(h, path, key: key)
        #expect(status == 0 && found == "prod-token", "the recovery key typed keeps working: \(status) \(found)")
        (status, _) = try Self.unlockAndFind(h, path, key: second)
        #expect(status == 51, "the other recovery slot is removed")
        // The master key was replaced: the old copy's wrap gives a key that verifies nothing live.
        let stale = try Keychain.open(at: old, slot: .recovery, secret: try RecoveryKeyText.parse(try SecureBytes(copying: Array(key.utf8))))
        let live = try SQLiteItemStore(openingExisting: path)
        let record = try live.transaction(write: false) { try live.readKeychainRecord() }
        let keys = try KeyHierarchy(
            master: try stale.allKeys().master(), keychainID: record.keychainID, keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        #expect(throws: KeychainError.self) { try Keychain(path: path, store: live, keys: keys).verify() }
    }

    /// A slot added, the file copied, the slot removed: the old row spliced back into the
    /// live file is refused, the live file opens no more with that key, and the old copy
    /// holds it still (a removed slot stays removed only in the file it was removed from),
    /// though on this account, which has seen a later generation, only its password opens it.
    @Test func aSlotSplicedInFromAnOlderCopyIsRefusedAndTheOldCopyStillOpens() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        let old = h.directory + "/old.keychain-db"
        _ = try FileSplicer.sqlite(path, "VACUUM INTO '\(old)';")
        chmod(old, 0o600)
        var out = try h.kc(["keyslot", "remove", "2", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0, "\(out.stderr)")
        var (status, found) = try Self.unlockAndFind(h, path, key: key)
        #expect(status == 51, "removed: \(status) \(found)")
        // The older copy still holds the slot, but this account has seen a later generation of
        // the keychain: the slot does not open it; its password does.
        (status, found) = try Self.unlockAndFind(h, old, key: key)
        #expect(status == 93 && found.contains("older"), "the older copy, through the slot: \(status) \(found)")
        out = try h.kc(["find", "-k", old, "-s", "deploy", "-a", "prod", "-w"], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0 && out.stdout == "prod-token", "the older copy opens with its password: \(out.stderr)")
        _ = try h.kc(["lock", "--all"])
        _ = try FileSplicer.sqlite(path, "ATTACH '\(old)' AS o; INSERT INTO main.kc_keyslots SELECT * FROM o.kc_keyslots;")
        try Self.expectRefused(h, path, key: key, "the old slot spliced back")
    }

    /// `kc keyslot remove` revokes: a recovery slot added (and a second one), the file
    /// copied, slot 2 removed, an item added. The removed key opens the old copy's wrap (as
    /// anyone holding both would, here through KeychainCore's libsodium calls): the master
    /// key it gives verifies neither the live header nor opens any live row, the new item's
    /// included; the second recovery slot is removed too, and named; the old slot row spliced
    /// back into the live file is refused.
    @Test func aRemovedRecoveryKeyWithAnOldCopyOpensNothingWrittenSince() throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        let second = try Self.addRecovery(h, path)
        let old = h.directory + "/old.keychain-db"
        _ = try FileSplicer.sqlite(path, "VACUUM INTO '\(old)';")
        chmod(old, 0o600)
        var out = try h.kc(["keyslot", "remove", "2", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("removed key slot 3 (recovery)") && out.stderr.contains("replaced its master key"), "\(out.stderr)")
        out = try h.kc(["keyslot", "list", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.stdout == "1\tpassword\t-\n", "\(out.stdout) \(out.stderr)")
        out = try h.kc(["add", "-k", path, "-s", "new", "-a", "later", "-w", "NEWSECRET"], password: KCHome.password, extra: Self.noAgent(h))
        try #require(out.status == 0, "\(out.stderr)")

        let stale = try Keychain.open(at: old, slot: .recovery, secret: try RecoveryKeyText.parse(try SecureBytes(copying: Array(key.utf8))))
        let oldMaster = try stale.allKeys().master()
        let live = try SQLiteItemStore(openingExisting: path)
        let record = try live.transaction(write: false) { try live.readKeychainRecord() }
        let keys = try KeyHierarchy(master: oldMaster, keychainID: record.keychainID, keyGeneration: record.keyGeneration, blindKeyIDs: Schema.blindKeyIDs)
        let probe = Keychain(path: path, store: live, keys: keys)
        #expect(throws: KeychainError.self, "the old master key verifies the live header") { try probe.verify() }
        var rows = 0, opened = 0
        try live.transaction(write: false) {
            try live.forEachRow(.all, includeData: true) { row in
                rows += 1
                if (try? RowCodec(keys: keys).open(row, checkingProtection: false)) != nil { opened += 1 }
                return true
            }
        }
        #expect(rows == 2 && opened == 0, "live rows opened with the old master key: \(opened) of \(rows)")

        for k in [key, second] {
            let (status, found) = try Self.unlockAndFind(h, path, key: k)
            #expect(status == 51, "a removed slot: \(status) \(found)")
        }
        _ = try h.kc(["lock", "--all"])
        _ = try FileSplicer.sqlite(path, "ATTACH '\(old)' AS o; INSERT INTO main.kc_keyslots SELECT * FROM o.kc_keyslots WHERE id = 2;")
        try Self.expectRefused(h, path, key: key, "the removed slot spliced back")
    }

    /// A recovery key that cannot be written (stdout is /dev/full) is never a slot: kc exits
    /// 220 (errSecIO) and the keychain keeps the password slot only.
    @Test func aRecoveryKeyThatCannotBeWrittenAddsNoSlot() throws {
        let (h, path) = try Self.keychain()
        var out = try h.sh("KC_AGENT_DIR='\(h.directory)/no-agent' exec kc keyslot add --recovery -k '\(path)' > /dev/full")
        #expect(out.status == 220 && out.stderr.contains("no slot was added"), "\(out.status) \(out.stderr)")
        out = try h.kc(["keyslot", "list", "-k", path], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 0 && out.stdout == "1\tpassword\t-\n", "\(out.stdout) \(out.stderr)")
    }

    /// A slot row written with sqlite3 (a well-formed recovery slot of another keychain, and
    /// one of a kind kc does not know) is refused.
    @Test func aSlotAddedByWritingTheTableIsRefused() throws {
        let (h, path) = try Self.keychain()
        let (h2, other) = try Self.keychain()
        let key = try Self.addRecovery(h2, other)
        _ = h2
        let copy = h.directory + "/copy.keychain-db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        _ = try FileSplicer.sqlite(path, "ATTACH '\(other)' AS o; INSERT INTO main.kc_keyslots SELECT * FROM o.kc_keyslots;")
        try Self.expectRefused(h, path, key: key, "another keychain's slot")
        _ = try FileSplicer.sqlite(copy, "INSERT INTO kc_keyslots VALUES (2, 'fido2', 1, X'00');")
        chmod(copy, 0o600)
        let out = try h.kc(["find", "-k", copy, "-s", "deploy", "-w"], password: KCHome.password, extra: Self.noAgent(h))
        #expect(out.status == 93 && out.stderr.contains("does not know"), "an unknown kind: \(out.status) \(out.stderr)")
    }

    /// Each column of a slot row edited (its creation time, a byte of its salt, of its wrap,
    /// its id) is refused with the password and with the recovery key.
    @Test(arguments: [
        "UPDATE kc_keyslots SET created = created + 1",
        "UPDATE kc_keyslots SET fields = X'00000010' || zeroblob(16) || substr(fields, 21)",
        "UPDATE kc_keyslots SET fields = substr(fields, 1, 30) || X'00' || substr(fields, 32)",
        "UPDATE kc_keyslots SET id = 3"
    ])
    func aSlotsFieldsEditedAreRefused(edit: String) throws {
        let (h, path) = try Self.keychain()
        let key = try Self.addRecovery(h, path)
        _ = try FileSplicer.sqlite(path, edit + ";")
        try Self.expectRefused(h, path, key: key, edit)
    }

    /// The password (in this process and `kc verify`) and the recovery key (through the agent)
    /// are both refused on `path`, and nothing is printed.
    static func expectRefused(_ h: KCHome, _ path: String, key: String, _ what: String) throws {
        var out = try h.kc(["find", "-k", path, "-s", "deploy", "-a", "prod", "-w"], password: KCHome.password, extra: noAgent(h))
        #expect(out.status == 93 && out.stdout.isEmpty, "\(what), password: \(out.status) \(out.stderr)")
        out = try h.kc(["verify", "-k", path], password: KCHome.password, extra: noAgent(h))
        #expect(out.status == 93, "\(what), verify: \(out.status) \(out.stderr)")
        let (status, found) = try unlockAndFind(h, path, key: key)
        #expect([93, 51].contains(status), "\(what), recovery key: \(status) \(found)")
    }
}
