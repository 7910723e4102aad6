import Testing
import KeychainCore
import TeamCore

/// A member's keys (`docs/format.md` §9.1): derived from the seed as documented (checked
/// against Python's hashlib and `cryptography`, not libsodium), stable, and doing what they
/// are for: signatures that verify only unchanged, boxes that open only for their member.
@Suite struct MemberKeysTests {
    /// The seed of the vectors: the bytes 0, 1, …, 31.
    static let vectorSeed: [UInt8] = Array(0..<32)

    /// Computes the public keys, member id and fingerprint of a seed in Python: the box seed
    /// and sign seed with hashlib.blake2b keyed by the seed; X25519's public key from the
    /// first half of SHA-512 of the box seed (what crypto_box_seed_keypair does); Ed25519's
    /// from the sign seed; the id and fingerprint with hashlib.blake2b of 16 and 20 bytes.
    static let pythonDerivation = """
        import hashlib, sys
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives import serialization as s
        seed = bytes.fromhex(sys.argv[1])
        bs = hashlib.blake2b(b"kc team box", key=seed, digest_size=32).digest()
        ss = hashlib.blake2b(b"kc team sign", key=seed, digest_size=32).digest()
        raw = lambda k: k.public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
        box = raw(X25519PrivateKey.from_private_bytes(hashlib.sha512(bs).digest()[:32]).public_key())
        sign = raw(Ed25519PrivateKey.from_private_bytes(ss).public_key())
        mid = hashlib.blake2b(b"kc team member v1" + box + sign, digest_size=16).hexdigest()
        fp = hashlib.blake2b(b"kc team fingerprint v1" + box + sign, digest_size=20).hexdigest()
        print(box.hex(), sign.hex(), mid, "-".join(fp[i:i + 4] for i in range(0, 40, 4)))
        """

    /// The stability vector: committed values (computed once by the Python above, at the
    /// commit that added this test) and the same computed again now in Python, both equal
    /// to what kc derives. A change to the derivation would strand every team member.
    @Test func theDerivationOfTheVectorSeedIsStable() throws {
        let keys = try MemberKeys(seed: SecureBytes(copying: Self.vectorSeed))
        let committed = [
            "115e456b7caafeb3beda0d6f1139eaec7d7d522e54791a89be67fb48eefdf549",
            "0d6dcdab06fb319d4a2beb3479321bde1cfc2918517c97dcc861016f4f57ae9c",
            "53df5a15442137eb97614fd371bf7810",
            "6279-847f-07da-299c-6605-93bd-c6f8-db86-82c5-1289"
        ]
        let ours = [Hex.encode(keys.boxPublicKey), Hex.encode(keys.signPublicKey), Hex.encode(keys.memberID), keys.fingerprint]
        #expect(ours == committed)
        let python = try PythonReference.run(Self.pythonDerivation, [Hex.encode(Self.vectorSeed)])
        #expect(python.split(separator: " ").map(String.init) == ours)
    }

    /// Random seeds agree with Python too (the vector seed could be a lucky case).
    @Test func randomSeedsAgreeWithPython() throws {
        for _ in 0..<3 {
            let keys = try MemberKeys.generate()
            let seedHex = keys.seed.withUnsafeBytes { Hex.encode(Array($0)) }
            let python = try PythonReference.run(Self.pythonDerivation, [seedHex])
            #expect(
                python == [Hex.encode(keys.boxPublicKey), Hex.encode(keys.signPublicKey), Hex.encode(keys.memberID), keys.fingerprint].joined(separator: " "))
        }
    }

    @Test func theSameSeedGivesTheSameKeysAndAnotherSeedOthers() throws {
        let a = try MemberKeys(seed: SecureBytes(copying: Self.vectorSeed))
        let b = try MemberKeys(seed: SecureBytes(copying: Self.vectorSeed))
        let c = try MemberKeys.generate()
        #expect(a.boxPublicKey == b.boxPublicKey && a.signPublicKey == b.signPublicKey && a.memberID == b.memberID)
        #expect(a.boxPublicKey != c.boxPublicKey && a.signPublicKey != c.signPublicKey && a.memberID != c.memberID)
        #expect(a.boxPublicKey != a.signPublicKey, "the two pairs come from different contexts")
        #expect(a.memberID == MemberKeys.memberID(boxPublicKey: a.boxPublicKey, signPublicKey: a.signPublicKey))
        #expect(a.fingerprint == MemberKeys.fingerprint(boxPublicKey: a.boxPublicKey, signPublicKey: a.signPublicKey))
        // A substituted key of either kind changes the fingerprint an admin compares.
        #expect(MemberKeys.fingerprint(boxPublicKey: c.boxPublicKey, signPublicKey: a.signPublicKey) != a.fingerprint)
        #expect(MemberKeys.fingerprint(boxPublicKey: a.boxPublicKey, signPublicKey: c.signPublicKey) != a.fingerprint)
    }

    @Test func aSeedOfTheWrongLengthIsRefused() throws {
        for count in [0, 16, 31, 33, 64] {
            #expect(throws: KeychainError(errSecParam, "a member seed has 32 bytes, not \(count)")) {
                _ = try MemberKeys(seed: SecureBytes(copying: [UInt8](repeating: 7, count: count)))
            }
        }
    }

    @Test func theFingerprintIsTenGroupsOfFourHexDigits() throws {
        let fp = try MemberKeys.generate().fingerprint
        let groups = fp.split(separator: "-", omittingEmptySubsequences: false)
        #expect(groups.count == 10)
        #expect(groups.allSatisfy { $0.count == 4 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }

    @Test func aTypedFingerprintIsNormalised() throws {
        let fp = "6279-847f-07da-299c-6605-93bd-c6f8-db86-82c5-1289"
        for typed in [
            fp, fp.uppercased(), fp.replacingOccurrences(of: "-", with: ""),
            fp.replacingOccurrences(of: "-", with: " "), "  6279847F 07DA-299C 660593bd-c6f8db8682c51289 "
        ] {
            #expect(try MemberKeys.normalizeFingerprint(typed) == fp)
        }
    }

    @Test(arguments: [
        "", "6279-847f", "6279-847f-07da-299c-6605-93bd-c6f8-db86-82c5-12890",
        "6279-847f-07da-299c-6605-93bd-c6f8-db86-82c5-128g", "6279:847f:07da:299c:6605:93bd:c6f8:db86:82c5:1289",
        "6279-847f-07da-299c-6605-93bd-c6f8-db86-82c5-128９"
    ])
    func aMalformedFingerprintIsRefused(_ typed: String) {
        #expect { try MemberKeys.normalizeFingerprint(typed) } throws: { ($0 as? KeychainError)?.status == errSecParam }
    }

    @Test func aSignatureVerifiesOnlyForItsMessageAndKey() throws {
        let keys = try MemberKeys.generate()
        let other = try MemberKeys.generate()
        let message = Array("kc team wrap v1 and so on".utf8)
        let signature = keys.sign(message)
        #expect(signature.count == 64)
        #expect(MemberKeys.verify(signature: signature, message: message, publicKey: keys.signPublicKey))
        #expect(!MemberKeys.verify(signature: signature, message: message + [0], publicKey: keys.signPublicKey))
        #expect(!MemberKeys.verify(signature: signature, message: message, publicKey: other.signPublicKey))
        var flipped = signature
        flipped[10] ^= 1
        #expect(!MemberKeys.verify(signature: flipped, message: message, publicKey: keys.signPublicKey))
        #expect(!MemberKeys.verify(signature: Array(signature.prefix(63)), message: message, publicKey: keys.signPublicKey))
        #expect(!MemberKeys.verify(signature: signature, message: message, publicKey: Array(keys.signPublicKey.prefix(31))))
        // The box key is not a signing key.
        #expect(!MemberKeys.verify(signature: signature, message: message, publicKey: keys.boxPublicKey))
    }

    @Test func aSealedBoxOpensOnlyForItsMember() throws {
        let keys = try MemberKeys.generate()
        let other = try MemberKeys.generate()
        let secret = Array("a master key, say".utf8)
        let sealed = try MemberKeys.seal(secret, to: keys.boxPublicKey)
        #expect(sealed.count == secret.count + 48)
        #expect(try keys.open(sealed: sealed).withUnsafeBytes { Array($0) } == secret)
        let fromSecure = try MemberKeys.seal(SecureBytes(copying: secret), to: keys.boxPublicKey)
        #expect(fromSecure != sealed, "an ephemeral key per box")
        #expect(try keys.open(sealed: fromSecure).withUnsafeBytes { Array($0) } == secret)
        #expect { try other.open(sealed: sealed) } throws: { ($0 as? KeychainError)?.status == errSecDecode }
        var edited = sealed
        edited[edited.count - 1] ^= 1
        #expect { try keys.open(sealed: edited) } throws: { ($0 as? KeychainError)?.status == errSecDecode }
        #expect { try keys.open(sealed: Array(sealed.prefix(47))) } throws: { ($0 as? KeychainError)?.status == errSecDecode }
        #expect { try MemberKeys.seal(secret, to: Array(keys.boxPublicKey.prefix(31))) } throws: { ($0 as? KeychainError)?.status == errSecParam }
    }
}
