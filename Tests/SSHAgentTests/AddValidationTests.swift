import CSodium
import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport
import SSHAgent
import Testing

/// ADD_IDENTITY from a client that is not ssh-add (any process of the uid, or a host the
/// agent is forwarded to): a key whose halves do not belong together, a point off its curve,
/// too many keys, or a listing too long for OpenSSH's clients must not make the agent's
/// other keys unusable.
@Suite struct AddValidationTests {
    /// An add request (17) for a private wire form, with a comment.
    static func add(_ wire: [UInt8], comment: String = "k") -> [UInt8] { [17] + wire + Wire.string(comment) }

    /// The private wire form of a key file ssh-keygen makes.
    static func wire(_ f: SSHAgentFixture, _ name: String, type: String) throws -> [UInt8] {
        let path = try f.makeKey(name, type: type)
        let file = try SSHKeyFile(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        return try file.privateKey(passphrase: nil).key.wire
    }

    /// Fields of a wire form: the type, then each string.
    static func fields(_ wire: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i + 4 <= wire.count {
            let n = wire[i..<i + 4].reduce(0) { $0 << 8 | Int($1) }
            out.append(Array(wire[(i + 4)..<(i + 4 + n)]))
            i += 4 + n
        }
        return out
    }

    static func join(_ fields: [[UInt8]]) -> [UInt8] { fields.flatMap { Wire.string($0) } }

    static func ed25519Pair() -> (pk: [UInt8], sk: [UInt8]) {
        var pk = [UInt8](repeating: 0, count: 32), sk = [UInt8](repeating: 0, count: 64)
        _ = sodium_init()
        crypto_sign_keypair(&pk, &sk)
        return (pk, sk)
    }

    static func ed25519Wire(pk: [UInt8], sk: [UInt8]) -> [UInt8] { Wire.string("ssh-ed25519") + Wire.string(pk) + Wire.string(sk) }

    @Test func keysWhoseHalvesDoNotMatchAreRefusedAndTheListingStaysUsable() throws {
        let f = try SSHAgentFixture()
        let good = try f.makeKey("good", type: "ed25519")
        #expect(try f.sshAdd([good]).status == 0)
        // ECDSA P-256: one byte of the public point flipped (off the curve); d = 1 with the
        // real public point.
        var ec = Self.fields(try Self.wire(f, "ec", type: "ecdsa"))
        var offCurve = ec
        offCurve[2][40] ^= 1
        #expect(try f.exchange(Self.add(Self.join(offCurve))) == [5])
        ec[3] = [1]
        #expect(try f.exchange(Self.add(Self.join(ec))) == [5])
        // RSA: the real public key with made-up d, iqmp, p, q.
        var rsa = Self.fields(try Self.wire(f, "rsa", type: "rsa"))
        rsa[3] = [0x01] + [UInt8](repeating: 0x55, count: 200)
        rsa[5] = [0x7f] + [UInt8](repeating: 0x33, count: 127)
        #expect(try f.exchange(Self.add(Self.join(rsa))) == [5])
        // Ed25519: one key's seed with another's public key.
        let a = Self.ed25519Pair(), b = Self.ed25519Pair()
        #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: b.pk, sk: Array(a.sk[..<32]) + b.pk))) == [5])
        // A valid key is still accepted, and OpenSSH's client still reads the listing.
        #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: a.pk, sk: a.sk))) == [6])
        let listed = try f.sshAdd(["-l"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == 2, "\(listed.stdout)")
    }

    @Test func theAgentHoldsAtMost1024AddedKeys() throws {
        let f = try SSHAgentFixture()
        let c = try #require(try UnixSocket.connect(to: f.socket))
        for i in 0..<SigningKey.maximumHeld {
            let k = Self.ed25519Pair()
            #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: k.pk, sk: k.sk), comment: "k\(i)"), on: c) == [6])
        }
        let extra = Self.ed25519Pair()
        #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: extra.pk, sk: extra.sk)), on: c) == [5])
        let listed = try f.sshAdd(["-l"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == SigningKey.maximumHeld)
        // Once one goes, another fits.
        #expect(try f.sshAdd(["-D"]).status == 0)
        #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: extra.pk, sk: extra.sk)), on: c) == [6])
    }

    @Test func aListingTooLongForOpenSSHLeavesKeysOut() throws {
        let f = try SSHAgentFixture()
        // Three keys with 100 KiB comments: 300 KiB in all, over OpenSSH's 256 KiB.
        for i in 0..<3 {
            let k = Self.ed25519Pair()
            let comment = String(repeating: Character(String(i)), count: 100 * 1024)
            #expect(try f.exchange(Self.add(Self.ed25519Wire(pk: k.pk, sk: k.sk), comment: comment)) == [6])
        }
        let listed = try f.sshAdd(["-l"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == 2, "\(listed.stdout.prefix(200))")
    }
}
