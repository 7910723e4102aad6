import Foundation
import Testing
@testable import KeychainCore

/// Known answers for the key hierarchy and blind indexes, computed independently by
/// `Tests/Vectors/make_key_vectors.py` with Python's hashlib.
@Suite struct KeyHierarchyTests {
    static func vectors() throws -> [String: [UInt8]] {
        let text = String(decoding: try Vectors.load("key-hierarchy.txt"), as: UTF8.self)
        var out: [String: [UInt8]] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            out[parts[0]] = try hex(parts[1])
        }
        return out
    }

    static func hex(_ s: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            guard let b = UInt8(s[i..<j], radix: 16) else { throw KeychainError(errSecDecode, "bad hex") }
            bytes.append(b)
            i = j
        }
        return bytes
    }

    func hierarchy(_ v: [String: [UInt8]]) throws -> KeyHierarchy {
        let mk = try SecureBytes(copying: try #require(v["master"]), guarded: true)
        return try KeyHierarchy(
            master: SymmetricKey(mk), keychainID: Array(repeating: 7, count: 16), keyGeneration: 1,
            blindKeyIDs: Schema.blindKeyIDs)
    }

    @Test func subkeysMatchIndependentComputation() throws {
        let v = try Self.vectors()
        let keys = try hierarchy(v)
        let whenUnlocked = try keys.classKeys(.whenUnlocked)
        let afterFirstUnlock = try keys.classKeys(.afterFirstUnlock)
        let pairs: [(String, SymmetricKey)] = [
            ("meta", whenUnlocked.meta), ("wrap", whenUnlocked.wrap), ("header", keys.header), ("set", keys.set),
            ("afu.meta", afterFirstUnlock.meta), ("afu.wrap", afterFirstUnlock.wrap)
        ]
        for (name, key) in pairs {
            #expect(key.withBytes { Array($0) } == v["subkey.\(name)"], "subkey \(name)")
        }
        let svce = try keys.blindKey(BlindIndex.keyID(classCode: "genp", attribute: "svce"))
        #expect(svce.withBytes { Array($0) } == v["blindkey.genp.svce"])
    }

    /// Format 4: a locked keychain keeps after-first-unlock's class key, the blind-index
    /// keys, K_header and K_set, and neither the master key nor the when-unlocked class key.
    @Test func aLockedHierarchyKeepsOnlyWhatReadsAfterFirstUnlockItems() throws {
        let v = try Self.vectors()
        let kept = try hierarchy(v).afterFirstUnlockOnly()
        #expect(!kept.isComplete)
        expectStatus(errSecInteractionNotAllowed) { _ = try kept.master() }
        expectStatus(errSecInteractionNotAllowed) { _ = try kept.classKeys(.whenUnlocked) }
        #expect(try kept.classKeys(.afterFirstUnlock).meta.withBytes { Array($0) } == v["subkey.afu.meta"])
        #expect(kept.header.withBytes { Array($0) } == v["subkey.header"])
        #expect(kept.set.withBytes { Array($0) } == v["subkey.set"])
        #expect(try kept.blindKey(BlindIndex.keyID(classCode: "genp", attribute: "svce")).withBytes { Array($0) } == v["blindkey.genp.svce"])
    }

    @Test func blindIndexesMatchIndependentComputation() throws {
        let v = try Self.vectors()
        let codec = RowCodec(keys: try hierarchy(v))
        let fp = try codec.fingerprint(.string("github.com"), column: .service, itemClass: .genericPassword)
        #expect(fp == v["blind.genp.svce.github.com"])
        let prints = try codec.fingerprints(
            .genericPassword,
            [
                "acct": .string("alice"), "svce": .string("github.com"),
                "agrp": .string(""), "sync": .int(0)
            ])
        #expect(prints.pk == v["blind.genp.pk.alice@github.com"])
        #expect(prints.indexes[.service] == fp)
        #expect(prints.pairs.isEmpty)
        // String and Data with the same bytes index alike; another class or attribute does not.
        #expect(try codec.fingerprint(.data(Array("github.com".utf8)), column: .service, itemClass: .genericPassword) == fp)
        #expect(try codec.fingerprint(.string("github.com"), column: .account, itemClass: .genericPassword) != fp)
        #expect(try codec.fingerprint(.string("github.com"), column: .label, itemClass: .genericPassword) != fp)
    }

    /// Format 3: the pairs of a Secret Service map are fingerprinted one by one, and the
    /// map joins the primary key only when it is not empty (an empty one is no map).
    @Test func secretServicePairsMatchIndependentComputation() throws {
        let v = try Self.vectors()
        let codec = RowCodec(keys: try hierarchy(v))
        let base: [String: AttributeValue] = ["acct": .string("alice"), "svce": .string("github.com"), "agrp": .string(""), "sync": .int(0)]
        var withMap = base
        withMap[kcAttrSecretServiceAttributes] = .map(try AttributeMap(parsing: ["service": "github.com", "username": "alice"], key: "kcsa"))
        let prints = try codec.fingerprints(.genericPassword, withMap)
        #expect(prints.pk == v["blind.genp.pk.alice@github.com+kcsa"])
        let service = try #require(v["blind.genp.kcsa.service:github.com"])
        #expect(prints.pairs.count == 2 && prints.pairs.contains(service))
        #expect(prints.pairs == prints.pairs.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(try codec.pairFingerprints(try AttributeMap(parsing: ["service": "github.com"], key: "kcsa"), itemClass: .genericPassword) == [service])
        var emptyMap = base
        emptyMap[kcAttrSecretServiceAttributes] = .map(try AttributeMap(parsing: [String: String](), key: "kcsa"))
        #expect(try codec.fingerprints(.genericPassword, emptyMap).pk == v["blind.genp.pk.alice@github.com"])
        let key = try codec.keys.blindKey(BlindIndex.keyID(classCode: "genp", attribute: "kcsa"))
        #expect(key.withBytes { Array($0) } == v["blindkey.genp.kcsa"])
    }

    @Test func certificateHashAndKeyLabelShareAnIndexKey() throws {
        let v = try Self.vectors()
        let codec = RowCodec(keys: try hierarchy(v))
        let hash = AttributeValue.data([1, 2, 3, 4])
        #expect(
            try codec.fingerprint(hash, column: .applicationLabel, itemClass: .certificate)
                == codec.fingerprint(hash, column: .applicationLabel, itemClass: .key))
    }

    @Test func encodingsAreInjective() {
        // Length prefixes keep ("ab","c") and ("a","bc") apart, and tags keep 0 and "" apart.
        #expect(
            AttributeValue.string("ab").indexEncoding + AttributeValue.string("c").indexEncoding
                != AttributeValue.string("a").indexEncoding + AttributeValue.string("bc").indexEncoding)
        #expect(AttributeValue.int(0).indexEncoding != AttributeValue.string("").indexEncoding)
        #expect(AttributeValue.string("a\u{0}").indexEncoding != AttributeValue.string("a").indexEncoding)
    }

    /// Format 5's header MAC (`docs/format.md` §6) over a fixed record and state: the whole
    /// password record (its one password slot, wrap and KDF fields) inside, as Python computes it.
    @Test func theFormatFiveHeaderMACMatchesIndependentComputation() throws {
        let v = try Self.vectors()
        let keys = try hierarchy(v)
        let record = KeychainRecord(
            formatVersion: 5, keychainID: Array(repeating: 7, count: 16), keyGeneration: 1, kdfAlgorithm: 2,
            kdfOpslimit: 2, kdfMemlimit: 67_108_864, kdfSalt: Array(0..<16), wrappedMasterKey: Array(100..<172))
        let state = StateRecord(
            minWriterVersion: 5, generation: 7, itemCount: 3, accumulator: Array(repeating: 0xAA, count: 32),
            idleTimeout: 900, maxTimeout: 43_200, mac: [])
        #expect(Header.mac(state, record: record, keys: keys) == v["header.v5.mac"])
        // Every field of the record is covered: each one changed changes the MAC.
        var edits: [KeychainRecord] = []
        for edit in 0..<6 {
            var r = record
            switch edit {
            case 0: r.kdfSalt[0] ^= 1
            case 1: r.wrappedMasterKey[71] ^= 1
            case 2: r.kdfOpslimit = 3
            case 3: r.kdfMemlimit = 1 << 27
            case 4: r.kdfAlgorithm = 1
            default: r.keyGeneration = 2
            }
            edits.append(r)
        }
        for r in edits { #expect(Header.mac(state, record: r, keys: keys) != v["header.v5.mac"], "\(r)") }
    }

    /// Format 6 (`docs/format.md` §2.1, §2.2): the header MAC over a record with a recovery
    /// slot after the password slot, the slot's key, its wrap's associated data and the
    /// recovery key's text, as Python computes them; each field of the slot row changes the MAC.
    @Test func theFormatSixSlotsMatchIndependentComputation() throws {
        let v = try Self.vectors()
        let keys = try hierarchy(v)
        let fields = RecoverySlot(salt: Array(50..<66), wrappedMasterKey: Array(1..<73)).fields
        let slot = KeySlotRow(id: 2, kind: .recovery, created: 1_764_201_600, fields: fields)
        let record = KeychainRecord(
            formatVersion: 6, keychainID: Array(repeating: 7, count: 16), keyGeneration: 1, kdfAlgorithm: 2,
            kdfOpslimit: 2, kdfMemlimit: 67_108_864, kdfSalt: Array(0..<16), wrappedMasterKey: Array(100..<172), slots: [slot])
        let state = StateRecord(
            minWriterVersion: 6, generation: 7, itemCount: 3, accumulator: Array(repeating: 0xAA, count: 32),
            idleTimeout: 900, maxTimeout: 43_200, mac: [])
        #expect(Header.mac(state, record: record, keys: keys) == v["header.v6.recovery.mac"])
        for edit in 0..<4 {
            var r = record
            switch edit {
            case 0: r.slots[0].id = 3
            case 1: r.slots[0].created += 1
            case 2: r.slots[0].fields[5] ^= 1
            default: r.slots = []
            }
            #expect(Header.mac(state, record: r, keys: keys) != v["header.v6.recovery.mac"], "\(edit)")
        }
        let secret = try SecureBytes(copying: try #require(v["slot.recovery.secret"]))
        let key = try SlotWrap.key(secret: secret, kind: .recovery, keychainID: Array(repeating: 7, count: 16), slotID: 2, salt: Array(50..<66))
        #expect(key.withBytes { Array($0) } == v["slot.recovery.key"])
        #expect(
            SlotWrap.associatedData(
                kind: .recovery, keychainID: Array(repeating: 7, count: 16), keyGeneration: 1, slotID: 2, created: 1_764_201_600, salt: Array(50..<66))
                == v["slot.recovery.ad"])
        let text = try RecoveryKeyText.format(secret)
        #expect(text.withUnsafeBytes { Array($0) } == v["slot.recovery.text"])
        let back = try RecoveryKeyText.parse(
            try SecureBytes(
                copying: Array(
                    String(decoding: try #require(v["slot.recovery.text"]), as: UTF8.self).uppercased().replacingOccurrences(of: "-", with: " ").utf8)))
        #expect(back.withUnsafeBytes { Array($0) } == v["slot.recovery.secret"])
    }
}

/// Argon2id parameters and the sealing primitives.
@Suite struct CryptoTests {
    @Test func kdfBoundsAreCheckedBeforeDerivation() throws {
        let salt = [UInt8](repeating: 1, count: 16)
        let bad: [(UInt32, UInt64, UInt64, [UInt8])] = [
            (1, 3, 256 << 20, salt),   // Argon2i
            (2, 1, 256 << 20, salt),   // opslimit below 2
            (2, 17, 256 << 20, salt),   // opslimit above 16
            (2, 3, 8 << 20, salt),   // memlimit below 64 MiB
            (2, 3, 1 << 40, salt),   // 1 TiB: must be refused, not attempted
            (2, 3, 256 << 20, [1, 2, 3])   // short salt
        ]
        for (alg, ops, mem, s) in bad {
            let p = KDFParameters(algorithm: alg, opslimit: ops, memlimit: mem, salt: s)
            expectStatus(errSecDecode, "alg \(alg) ops \(ops) mem \(mem)") { try p.validate() }
        }
        for profile in KDFProfile.allCases {
            let p = KDFParameters(profile: profile)
            try p.validate()
            #expect(p.profile == profile)
            #expect(p.salt.count == 16)
        }
        #expect(KDFParameters(profile: .interactive).salt != KDFParameters(profile: .interactive).salt)
    }

    @Test func sealAndOpen() throws {
        let key = try KeyHierarchy.newDataKey()
        let plain: [UInt8] = Array("attack at dawn".utf8)
        let box = plain.withUnsafeBytes { AEAD.seal($0, key: key, ad: [1, 2, 3]) }
        #expect(box.count == 24 + plain.count + 16)
        #expect(plain.withUnsafeBytes { AEAD.seal($0, key: key, ad: [1, 2, 3]) } != box, "nonces are random")
        let opened = try AEAD.open(box, key: key, ad: [1, 2, 3], what: "test")
        #expect(opened.withUnsafeBytes { Array($0) } == plain)
        expectStatus(errSecDecode, "other associated data") { _ = try AEAD.open(box, key: key, ad: [1, 2, 4], what: "test") }
        expectStatus(errSecDecode, "other key") { _ = try AEAD.open(box, key: try KeyHierarchy.newDataKey(), ad: [1, 2, 3], what: "test") }
        for i in [0, 23, 24, box.count - 1] {
            var bad = box
            bad[i] ^= 0x01
            expectStatus(errSecDecode, "flipped byte \(i)") { _ = try AEAD.open(bad, key: key, ad: [1, 2, 3], what: "test") }
        }
        expectStatus(errSecDecode, "truncated") { _ = try AEAD.open(Array(box.prefix(30)), key: key, ad: [1, 2, 3], what: "test") }
    }

    @Test func coreDumpsCanBeTurnedOff() async {
        await #expect(processExitsWith: .success) {
            #expect(ProcessHardening.isDumpable)
            #expect(ProcessHardening.disableCoreDumps())
            #expect(!ProcessHardening.isDumpable)
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
            #expect(limit.rlim_cur == 0 && limit.rlim_max == 0)
        }
    }

    @Test func paddingHidesLengthsToTheBlock() throws {
        for n in [0, 1, 100, 255, 256, 257, 1000] {
            let bytes = [UInt8](repeating: 0x41, count: n)
            let padded = try Padding.pad(bytes)
            #expect(padded.count % 256 == 0 && padded.count > n)
            #expect(try Padding.unpaddedLength(padded) == n)
        }
    }

    @Test func metadataDecoderRejectsGarbage() {
        let good = Metadata.encode(["acct": .string("a"), "port": .int(5), "cdat": .date(1.5), "gena": .data([0, 1])])
        #expect((try? Metadata.decode(good)) == ["acct": .string("a"), "port": .int(5), "cdat": .date(1.5), "gena": .data([0, 1])])
        for cut in 0..<good.count {
            expectStatus(errSecDecode, "cut at \(cut)") { _ = try Metadata.decode(Array(good.prefix(cut))) }
        }
        expectStatus(errSecDecode) { _ = try Metadata.decode(good + [0]) }
        expectStatus(errSecDecode) { _ = try Metadata.decode([1, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }
}
