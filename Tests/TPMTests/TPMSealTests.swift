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
