import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// A PIN-sealed key: the right PIN opens it, a wrong one is refused and counted by the
/// TPM's dictionary-attack protection (TPM2_PT_LOCKOUT_COUNTER, read with tpm2_getcap), and
/// once the TPM locks out even the right PIN is refused until it recovers.
@Suite struct TPMPINTests {
    @Test func aWrongPINIsRefusedAndCountedUntilLockout() throws {
        let tpm = try TestSWTPM()
        let secret = KCTPM.secret()
        let sealed = try KCTPM.run(["seal", "--pin"], tcti: tpm.tcti, stdin: secret, pin: "2468\n")
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let before = try tpm.variable("TPM2_PT_LOCKOUT_COUNTER")

        let wrong = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "1357")
        #expect(wrong.status == exitCode(for: errSecAuthFailed), "\(wrong.stderr)")
        #expect(wrong.stderr.hasPrefix("kc: wrong PIN for the TPM"), "\(wrong.stderr)")
        #expect(wrong.stdoutBytes.isEmpty)
        #expect(try tpm.variable("TPM2_PT_LOCKOUT_COUNTER") == before + 1, "the TPM did not count the wrong PIN")

        let right = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "2468")
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stdoutBytes == secret)

        // Up to the TPM's limit, then the right PIN too is refused, and said to be a lockout.
        let limit = try tpm.tool("tpm2_getcap", ["properties-variable"])
        let maxTries = try Self.property(limit.stdout, "TPM2_PT_MAX_AUTH_FAIL")
        try #require(maxTries > 0 && maxTries < 50, "the TPM allows \(maxTries) wrong tries")
        var counter = try tpm.variable("TPM2_PT_LOCKOUT_COUNTER")
        while counter < maxTries {
            let again = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "0000")
            #expect(again.status == exitCode(for: errSecAuthFailed), "\(again.stderr)")
            let next = try tpm.variable("TPM2_PT_LOCKOUT_COUNTER")
            try #require(next == counter + 1, "the TPM counted \(next) after \(counter)")
            counter = next
        }
        let locked = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes, pin: "2468")
        #expect(locked.status == exitCode(for: errSecAuthFailed), "\(locked.stderr)")
        #expect(locked.stderr.hasPrefix("kc: the TPM is locked out after too many wrong PINs"), "\(locked.stderr)")
        // And for how long, as the TPM says (TPM2_PT_LOCKOUT_INTERVAL).
        let interval = try tpm.variable("TPM2_PT_LOCKOUT_INTERVAL")
        #expect(locked.stderr.contains("it allows another try within \(interval) s"), "\(locked.stderr)")
        #expect(locked.stdoutBytes.isEmpty)
    }

    @Test func aPINBlobWithNoWayToAskIsRefused() throws {
        let tpm = try TestSWTPM()
        let sealed = try KCTPM.run(["seal", "--pin"], tcti: tpm.tcti, stdin: KCTPM.secret(), pin: "2468")
        try #require(sealed.status == 0, "\(sealed.stderr)")
        // No --pin-fd and no terminal (Spawn starts a new session).
        let opened = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: sealed.stdoutBytes)
        #expect(opened.status == exitCode(for: errSecInteractionNotAllowed), "\(opened.stderr)")
        #expect(opened.stderr.contains("no terminal"), "\(opened.stderr)")
    }

    /// A PIN descriptor that is not open, or a PIN that is empty, seals nothing.
    @Test func aPINThatCannotBeReadSealsNothing() throws {
        let tpm = try TestSWTPM()
        let closed = try KCTPM.run(["seal", "--pin-fd", "7"], tcti: tpm.tcti, stdin: KCTPM.secret())
        #expect(closed.status == exitCode(for: errSecParam), "\(closed.stderr)")
        #expect(closed.stderr.hasPrefix("kc: descriptor 7 (--pin-fd) is not open"), "\(closed.stderr)")
        let empty = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret(), pin: "\n")
        #expect(empty.status == exitCode(for: errSecParam), "\(empty.stderr)")
        #expect(empty.stderr.contains("is empty"), "\(empty.stderr)")
        #expect(closed.stdoutBytes.isEmpty && empty.stdoutBytes.isEmpty)
    }

    static func property(_ text: String, _ name: String) throws -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let value = line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("0x"), let n = Int(value.dropFirst(2), radix: 16) { return n }
            if let n = Int(value) { return n }
        }
        throw KeychainError(errSecIO, "no \(name) in:\n\(text)")
    }
}
