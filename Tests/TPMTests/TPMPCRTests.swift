import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// A PCR-bound key unseals while its PCRs hold the values they held when it was sealed,
/// and is refused, saying so, once one of them is extended; with a PIN as well, both hold.
@Suite struct TPMPCRTests {
    static let extend = "16:sha256=" + String(repeating: "ab", count: 32)

    @Test func anExtendedPCRRefusesTheKey() throws {
        let tpm = try TestSWTPM()
        let secret = KCTPM.secret()
        let sealed = try KCTPM.run(["seal", "--pcrs", "7,16"], tcti: tpm.tcti, stdin: secret)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let opened = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdoutBytes == secret)

        let extended = try tpm.tool("tpm2_pcrextend", [Self.extend])
        try #require(extended.status == 0, "\(extended.stderr)")
        let refused = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes)
        #expect(refused.status == exitCode(for: errSecCSReqFailed), "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("kc: the machine's PCRs are no longer those the key was sealed to"), "\(refused.stderr)")
        #expect(refused.stdoutBytes.isEmpty)
    }

    @Test func aPCRBoundKeyWithAPINNeedsBoth() throws {
        let tpm = try TestSWTPM()
        let secret = KCTPM.secret()
        let sealed = try KCTPM.run(["seal", "--pcrs", "16"], tcti: tpm.tcti, stdin: secret, pin: "correct horse")
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let wrong = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "wrong horse")
        #expect(wrong.status == exitCode(for: errSecAuthFailed), "\(wrong.stderr)")
        #expect(try tpm.variable("TPM2_PT_LOCKOUT_COUNTER") == 1, "the TPM did not count the wrong PIN")
        let right = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "correct horse")
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stdoutBytes == secret)
        let extended = try tpm.tool("tpm2_pcrextend", [Self.extend])
        try #require(extended.status == 0, "\(extended.stderr)")
        let refused = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "correct horse")
        #expect(refused.status == exitCode(for: errSecCSReqFailed), "\(refused.stderr)")
    }

    @Test func aBadPCRListIsAUsageOfItsOwn() throws {
        let tpm = try TestSWTPM()
        for list in ["", "24", "a", "1,,2", "3,3", "-1"] {
            let out = try KCTPM.run(["seal", "--pcrs", list], tcti: tpm.tcti, stdin: KCTPM.secret())
            #expect(out.status == exitCode(for: errSecParam), "--pcrs '\(list)': \(out.stderr)")
            #expect(out.stdoutBytes.isEmpty)
        }
    }
}
