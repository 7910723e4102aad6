import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// kc-tpm against swtpm (docs/tpm.md): a key sealed to one TPM comes back from that TPM
/// and from no other, a PIN's wrong guesses are counted by the TPM's lockout, PCRs bind,
/// and a damaged blob or an absent TPM is refused with its documented status.
@Suite struct TPMSealTests {
    @Test func aSealedKeyUnsealsOnTheSameTPM() throws {
        let tpm = try TestSWTPM()
        let secret = KCTPM.secret()
        let sealed = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: secret)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(!sealed.stdoutBytes.isEmpty && Array(sealed.stdoutBytes.prefix(4)) == Array("kcTP".utf8))
        #expect(!sealed.stdoutBytes.windows(ofCount: 32).contains(secret), "the blob holds the secret in the clear")
        let opened = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdoutBytes == secret)
        #expect(opened.stderr.isEmpty)
    }

    @Test func anotherTPMCannotUnseal() throws {
        let first = try TestSWTPM()
        let sealed = try KCTPM.run(["seal"], tcti: first.tcti, stdin: KCTPM.secret())
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let other = try TestSWTPM()
        let opened = try KCTPM.run(["unseal"], tcti: other.tcti, stdin: sealed.stdoutBytes)
        #expect(opened.status == exitCode(for: errSecDecode), "\(opened.stderr)")
        #expect(opened.stderr.hasPrefix("kc: the key was sealed by another TPM"), "\(opened.stderr)")
        #expect(opened.stdoutBytes.isEmpty)
    }

    /// TPM2_Clear (tpm2_clear, with the lockout hierarchy's empty password) gives the owner
    /// hierarchy a new seed: the same TPM then refuses the blob as another TPM's.
    @Test func aClearedTPMCannotUnseal() throws {
        let tpm = try TestSWTPM()
        let sealed = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret())
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let cleared = try tpm.tool("tpm2_clear", ["-c", "l"])
        try #require(cleared.status == 0, "\(cleared.stderr)")
        let opened = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes)
        #expect(opened.status == exitCode(for: errSecDecode), "\(opened.stderr)")
        #expect(opened.stderr.contains("owner hierarchy was cleared"), "\(opened.stderr)")
        #expect(opened.stdoutBytes.isEmpty)
    }

    /// The primary is the TCG's ECC P-256 SRK: tpm2_createprimary, given the same template
    /// (unique: 32 zero bytes for x and y), makes the key whose name the blob recorded.
    @Test func theStoragePrimaryIsTheTCGTemplatesKey() throws {
        let tpm = try TestSWTPM()
        let sealed = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret())
        try #require(sealed.status == 0, "\(sealed.stderr)")
        // tpm2-tools reads -u as the in-memory TPMU_PUBLIC_ID: sizes little-endian, 128-byte buffers.
        var unique = [UInt8]()
        for _ in 0..<2 { unique += [32, 0] + [UInt8](repeating: 0, count: 128) }
        try Data(unique).write(to: URL(fileURLWithPath: tpm.folder + "/unique"))
        let made = try tpm.tool(
            "tpm2_createprimary",
            [
                "-C", "o", "-g", "sha256", "-G", "ecc256:null:aes128cfb",
                "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt",
                "-u", tpm.folder + "/unique", "-c", tpm.folder + "/srk.ctx"
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let read = try tpm.tool("tpm2_readpublic", ["-c", tpm.folder + "/srk.ctx", "-n", tpm.folder + "/srk.name"])
        try #require(read.status == 0, "\(read.stderr)")
        let name = Array(try Data(contentsOf: URL(fileURLWithPath: tpm.folder + "/srk.name")))
        #expect(name.count == 34)
        #expect(Array(sealed.stdoutBytes[14..<48]) == name, "the blob's primary is not the TCG SRK")
    }

    /// `describe` reads the flags a keyslot list shows, without a TPM.
    @Test func describeSaysPINAndPCRsWithoutTheTPM() throws {
        let tpm = try TestSWTPM()
        let cases: [([String], String?, String)] = [
            (["seal"], nil, "pin: no\npcrs: none\n"),
            (["seal", "--pcrs", "0,7,16"], "1234", "pin: yes\npcrs: 0,7,16\n")
        ]
        for (arguments, pin, expected) in cases {
            let sealed = try KCTPM.run(arguments, tcti: tpm.tcti, stdin: KCTPM.secret(), pin: pin)
            try #require(sealed.status == 0, "\(sealed.stderr)")
            let described = try KCTPM.run(["describe"], tcti: "swtpm:host=127.0.0.1,port=1", stdin: sealed.stdoutBytes)
            #expect(described.status == 0, "\(described.stderr)")
            #expect(described.stdout == expected)
        }
        let damaged = try KCTPM.run(["describe"], tcti: tpm.tcti, stdin: Array("kcTP".utf8))
        #expect(damaged.status == exitCode(for: errSecDecode), "\(damaged.stderr)")
    }

    @Test func theSecretIsExactly32Bytes() throws {
        let tpm = try TestSWTPM()
        for size in [0, 31, 33] {
            let out = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: Array(repeating: 7, count: size))
            #expect(out.status == exitCode(for: errSecParam), "\(size) bytes: \(out.stderr)")
            #expect(out.stderr.contains("exactly 32 bytes"), "\(out.stderr)")
            #expect(out.stdoutBytes.isEmpty)
        }
    }
}

extension Array where Element == UInt8 {
    /// Every run of `count` consecutive bytes.
    func windows(ofCount count: Int) -> [[UInt8]] {
        self.count < count ? [] : (0...(self.count - count)).map { Array(self[$0..<$0 + count]) }
    }
}
