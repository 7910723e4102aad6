import Foundation
import Testing
import KeychainCore
import TeamCore
import KCTestSupport
@testable import TeamStore

/// The checkpoint of a team keychain (`docs/format.md` §9.6): private, replaced atomically,
/// and refused when any byte of it changed (a program of this user moving it back would
/// hide a rollback).
@Suite struct CheckpointTests {
    /// A private home, a member's checkpoint key and a path in a folder not made yet.
    struct Fixture {
        /// The private home (removed at the end).
        let home: KCHome
        /// The member whose seed keys the checkpoint.
        let keys: MemberKeys
        /// The checkpoint key of that seed.
        let key: SymmetricKey
        /// A keychain id starting with de ad be ef (so the file name is known).
        let keychainID: [UInt8] = [0xde, 0xad, 0xbe, 0xef] + Sodium.randomBytes(28)
        /// The checkpoint's path under `home/state/kc`.
        let path: String
        /// A checkpoint to write.
        let sample = Checkpoint(
            generation: 42, head: Sodium.randomBytes(32), setDigest: Sodium.randomBytes(32), count: 7,
            keyGeneration: 3, time: 1_795_000_000)

        /// A new home and member.
        init() throws {
            home = try KCHome()
            keys = try MemberKeys.generate()
            key = try Checkpoint.key(seed: keys.seed)
            path = Checkpoint.path(stateDirectory: home.directory + "/state/kc", name: "infra", keychainID: keychainID)
        }

        /// The file's bytes.
        var bytes: [UInt8] { get throws { Array(try Data(contentsOf: URL(fileURLWithPath: path))) } }

        /// Overwrites the file in place (mode 0600), as another program of the user could.
        func overwrite(_ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
    }

    /// The error a call throws (nil when it does not throw).
    static func failure(_ body: () throws -> Void) -> KeychainError? {
        do { try body(); return nil } catch let e as KeychainError { return e } catch { return nil }
    }

    @Test func theFileIsNamedAfterTheTeamAndTheStartOfTheID() throws {
        let f = try Fixture()
        #expect(f.path == f.home.directory + "/state/kc/infra-deadbeef.checkpoint")
        let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 + "/kc" : nil }
        #expect(Checkpoint.stateDirectory == state ?? (ProcessInfo.processInfo.environment["HOME"] ?? "/") + "/.local/state/kc")
    }

    @Test func aCheckpointRoundTripsAndIsReplaced() throws {
        let f = try Fixture()
        #expect(try Checkpoint.read(at: f.path, key: f.key) == nil)
        try f.sample.advance(at: f.path, key: f.key)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == f.sample)
        var next = f.sample
        next.generation = 43
        next.time += 60
        try next.advance(at: f.path, key: f.key)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == next)
        // The same seed gives the same key (a restarted agent reads its checkpoint).
        let again = try Checkpoint.key(seed: MemberKeys(seed: f.keys.seed).seed)
        #expect(try Checkpoint.read(at: f.path, key: again) == next)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.home.directory + "/state/kc") == ["infra-deadbeef.checkpoint"])
    }

    @Test func theFileIsPrivateInAPrivateFolder() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        let mode = { (path: String) in (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue }
        #expect(try mode(f.path) == 0o600)
        #expect(try mode(f.home.directory + "/state/kc") == 0o700)
        try f.sample.advance(at: f.path, key: f.key)
        #expect(try mode(f.path) == 0o600)
    }

    /// Every byte is covered by the MAC: each one changed in turn is refused.
    @Test func changingAnyByteIsRefusedAsAltered() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        let original = try f.bytes
        for i in original.indices {
            var edited = original
            edited[i] ^= 0x01
            try f.overwrite(edited)
            let e = Self.failure { _ = try Checkpoint.read(at: f.path, key: f.key) }
            #expect(e?.status == errSecDecode, "byte \(i)")
            #expect(e?.message == "the checkpoint \(f.path) was altered (its MAC does not verify)", "byte \(i)")
        }
        try f.overwrite(Array(original.dropLast()))
        #expect(Self.failure { _ = try Checkpoint.read(at: f.path, key: f.key) }?.status == errSecDecode)
        try f.overwrite([])
        #expect(Self.failure { _ = try Checkpoint.read(at: f.path, key: f.key) }?.status == errSecDecode)
    }

    /// Another member's checkpoint (another seed's key) is not this one's.
    @Test func aCheckpointUnderAnotherKeyIsRefused() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        let other = try Checkpoint.key(seed: MemberKeys.generate().seed)
        #expect(Self.failure { _ = try Checkpoint.read(at: f.path, key: other) }?.status == errSecDecode)
    }

    /// The layout and the MAC key are the documented ones: Python's hashlib recomputes the
    /// key from the seed and the MAC of the file's body.
    @Test func theKeyAndMACAreTheDocumentedOnes() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        let seedHex = f.keys.seed.withUnsafeBytes { Hex.encode(Array($0)) }
        let python = """
            import hashlib, struct, sys
            seed, data = bytes.fromhex(sys.argv[1]), open(sys.argv[2], "rb").read()
            key = hashlib.blake2b(b"kc team checkpoint v1", key=seed, digest_size=32).digest()
            label = b"kc team checkpoint v1"
            body, mac = data[:-32], data[-32:]
            assert hashlib.blake2b(bytes([len(label)]) + label + body, key=key, digest_size=32).digest() == mac
            assert body[:4] == b"KCCP" and struct.unpack(">I", body[4:8])[0] == 1
            gen, = struct.unpack(">Q", body[8:16]); n, = struct.unpack(">I", body[16:20]); head = body[20:20 + n]; o = 20 + n
            n, = struct.unpack(">I", body[o:o + 4]); digest = body[o + 4:o + 4 + n]; o += 4 + n
            count, keygen, time = struct.unpack(">QIQ", body[o:])
            print(gen, head.hex(), digest.hex(), count, keygen, time)
            """
        let out = try PythonReference.run(python, [seedHex, f.path])
        #expect(out == "42 \(Hex.encode(f.sample.head)) \(Hex.encode(f.sample.setDigest)) 7 3 1795000000")
    }
    /// A checkpoint never moves backwards (issue 29, item 1): a lower generation leaves the
    /// file as it is and answers what it holds; so does the same generation with another
    /// head (the caller's view then shows a fork).
    @Test func aLowerGenerationNeverReplacesAHigherOne() throws {
        let f = try Fixture()
        var higher = f.sample
        higher.generation = 43
        #expect(try higher.advance(at: f.path, key: f.key) == higher)
        #expect(try f.sample.advance(at: f.path, key: f.key) == higher)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == higher)
        var other = higher
        other.head = Sodium.randomBytes(32)
        #expect(try other.advance(at: f.path, key: f.key) == higher)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == higher)
    }

    /// Writers racing (each with its own descriptor, as processes have) leave the highest
    /// generation any of them recorded: the read, the comparison and the write are one step.
    @Test func racingWritersLeaveTheHighest() throws {
        let f = try Fixture()
        let base = f.sample, path = f.path, key = f.key
        /// The generation writer `t` records at its step `i`.
        let generation: @Sendable (Int, Int) -> UInt64 = { t, i in UInt64(1 + (i * 8 + t) % 300) }
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<40 {
                var cp = base
                cp.generation = generation(t, i)
                _ = try? cp.advance(at: path, key: key)
            }
        }
        var top: UInt64 = 0
        for t in 0..<8 { for i in 0..<40 { top = max(top, generation(t, i)) } }
        #expect(try Checkpoint.read(at: f.path, key: f.key)?.generation == top)
    }
    /// A holder of the folder's lock that never lets go (a stopped process) does not make a
    /// writer wait for ever (a lock of the keychain records the checkpoint): it gives up
    /// after `Checkpoint.lockWait` seconds and leaves the file as it was.
    @Test func aHeldLockIsWaitedForAFewSecondsOnly() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        let folder = f.home.directory + "/state/kc"
        let held = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(held >= 0 && flock(held, LOCK_EX) == 0)
        defer { close(held) }
        var next = f.sample
        next.generation += 1
        let started = Date()
        #expect(Self.failure { try next.advance(at: f.path, key: f.key) }?.status == errSecNotAvailable)
        #expect(Date().timeIntervalSince(started) < Double(Checkpoint.lockWait) + 5)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == f.sample)
        flock(held, LOCK_UN)
        #expect(try next.advance(at: f.path, key: f.key) == next)
    }

    /// A lower checkpoint on disk that names another entry at its generation than the one
    /// the writer's view walked past (another process of this member shown another branch)
    /// is a fork: it is left as it is, not replaced by the higher one
    /// (`HostileServerTests.aRemovalRecordedBelowTheAgentsViewIsComparedWithTheChainItWalked`).
    @Test func aHigherCheckpointOnAnotherChainDoesNotReplaceALowerOne() throws {
        let f = try Fixture()
        try f.sample.advance(at: f.path, key: f.key)
        var higher = f.sample
        higher.generation = 44
        higher.head = Sodium.randomBytes(32)
        let refused = Self.failure {
            try higher.advance(at: f.path, key: f.key) { generation, head in generation == 42 && head == Sodium.randomBytes(32) }
        }
        #expect(refused?.status == errSecInvalidKeychain)
        #expect(try Checkpoint.read(at: f.path, key: f.key) == f.sample)
        try higher.advance(at: f.path, key: f.key) { generation, head in generation == 42 && head == f.sample.head }
        #expect(try Checkpoint.read(at: f.path, key: f.key) == higher)
    }

    /// The hashes a view walked: known from its base to its top, forgotten after a failed
    /// catch-up, and a walk that skips a generation starts again there.
    @Test func walkedHeadsKnowWhatTheViewWalkedPast() throws {
        let base = Sodium.randomBytes(32), h1 = Sodium.randomBytes(32), h2 = Sodium.randomBytes(32)
        var w = WalkedHeads(base: 5, head: base)
        w.append(h1, at: 6)
        w.append(h2, at: 7)
        #expect(w.hash(at: 5) == base && w.hash(at: 6) == h1 && w.hash(at: 7) == h2)
        #expect(w.hash(at: 4) == nil && w.hash(at: 8) == nil)
        #expect(w.agrees(at: 6, head: h1) && !w.agrees(at: 6, head: h2) && w.agrees(at: 3, head: h2))
        w.truncate(to: 6)
        #expect(w.top == 6 && w.hash(at: 7) == nil)
        w.append(h2, at: 9)
        #expect(w.base == 9 && w.hash(at: 6) == nil && w.hash(at: 9) == h2)
    }
}
