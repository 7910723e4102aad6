import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// What kc-tpm says when the blob or the TPM is not what it should be: damaged blobs are
/// refused without a crash, an absent TPM is said to be unreachable at once, and a TPM
/// that accepts the connection and never answers costs the --timeout, not a hang.
@Suite struct TPMFailureTests {
    @Test func aTruncatedOrFlippedBlobIsRefused() throws {
        let tpm = try TestSWTPM()
        let secret = KCTPM.secret()
        let sealed = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: secret)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let blob = sealed.stdoutBytes
        for length in [0, 1, 4, 11, 12, 13, 40, blob.count / 2, blob.count - 1] {
            let out = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: Array(blob.prefix(length)))
            #expect(out.status == exitCode(for: errSecDecode), "cut to \(length): \(out.status) \(out.stderr)")
            #expect(out.stderr.hasPrefix("kc: ") && out.stdoutBytes.isEmpty, "cut to \(length): \(out.stderr)")
        }
        let longer = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: blob + [0])
        #expect(longer.status == exitCode(for: errSecDecode), "\(longer.stderr)")
        // A bit flipped in each of a spread of bytes: the header, each length, the name, the
        // public and private parts. The version byte is a newer layout; anything else is damage.
        for index in Set(Array(stride(from: 0, to: blob.count, by: 5)) + [4, 6, 7, 8, 11, 12, 13, blob.count - 1]).sorted() {
            var flipped = blob
            flipped[index] ^= 0x80
            let out = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: flipped)
            let expected = index == 4 ? errSecWrongSecVersion : errSecDecode
            #expect(out.status == exitCode(for: expected), "byte \(index) flipped: \(out.status) \(out.stderr)")
            #expect(out.stderr.hasPrefix("kc: ") && out.stdoutBytes.isEmpty, "byte \(index) flipped: \(out.stderr)")
        }
        // And the blob itself still opens: what failed was the damage.
        let opened = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: blob)
        #expect(opened.stdoutBytes == secret, "\(opened.stderr)")
    }

    /// The PIN flag and the PCR mask are read from the blob, but the policy and authValue
    /// they stand for are in the sealed object's integrity-protected parts: a blob whose
    /// flag or mask is changed is well-formed, and the TPM refuses it.
    @Test func aBlobWhoseFlagOrPCRsAreChangedYieldsNoKey() throws {
        let tpm = try TestSWTPM()
        let plain = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret())
        try #require(plain.status == 0, "\(plain.stderr)")
        var withPIN = plain.stdoutBytes
        withPIN[6] |= 1   // now says it has a PIN: its sealed object says otherwise
        let guessed = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: withPIN, pin: "1234")
        #expect(guessed.status == exitCode(for: errSecDecode), "\(guessed.stderr)")
        #expect(guessed.stdoutBytes.isEmpty)

        let pinned = try KCTPM.run(["seal", "--pcrs", "16"], tcti: tpm.tcti, stdin: KCTPM.secret(), pin: "2468")
        try #require(pinned.status == 0, "\(pinned.stderr)")
        var withoutPIN = pinned.stdoutBytes
        withoutPIN[6] &= ~1   // now says it has none: refused before the TPM is tried, which
        // would count the empty authValue as a wrong PIN (found by the attack review)
        let before = try tpm.variable("TPM2_PT_LOCKOUT_COUNTER")
        let noPIN = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: withoutPIN)
        #expect(noPIN.status == exitCode(for: errSecDecode) && noPIN.stdoutBytes.isEmpty, "\(noPIN.stderr)")
        #expect(try tpm.variable("TPM2_PT_LOCKOUT_COUNTER") == before, "the TPM counted a try")
        var otherPCR = pinned.stdoutBytes
        #expect(otherPCR[9] == 0x01)   // the mask is bytes 8 to 11, big-endian: PCR 16 is byte 9's bit 0
        otherPCR[9] = 0x02   // PCR 17 instead
        let moved = try KCTPM.run(["unseal"], tcti: tpm.tcti, stdin: otherPCR, pin: "2468")
        #expect(moved.status == exitCode(for: errSecCSReqFailed), "\(moved.stderr)")
        #expect(moved.stdoutBytes.isEmpty)
    }

    /// The device TCTI writes TPM commands into the path it names: a regular file there is
    /// refused (206) and left as it was (found by the attack review: a file named in
    /// KC_TPM_TCTI was overwritten by a TPM command).
    @Test func aDeviceThatIsNotACharacterDeviceIsRefusedAndLeftAlone() throws {
        let folder = NSTemporaryDirectory() + "/kc-tpm-device-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let victim = folder + "/precious.txt"
        try Data("precious data\n".utf8).write(to: URL(fileURLWithPath: victim))
        let tpm = try TestSWTPM()
        let sealed = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret())
        try #require(sealed.status == 0, "\(sealed.stderr)")
        for command in [["seal"], ["unseal"]] {
            let input = command == ["seal"] ? KCTPM.secret() : sealed.stdoutBytes
            let out = try KCTPM.run(command, tcti: "device:" + victim, stdin: input)
            #expect(out.status == exitCode(for: errSecParam), "\(command): \(out.status) \(out.stderr)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious data\n", "\(command) wrote into the file")
        }
    }

    @Test func noTPMIsSaidAtOnce() throws {
        // A key sealed while the TPM ran, then the TPM gone: both commands say so at once.
        var tpm: TestSWTPM? = try TestSWTPM()
        let tcti = try #require(tpm?.tcti)
        let sealed = try KCTPM.run(["seal"], tcti: tcti, stdin: KCTPM.secret())
        try #require(sealed.status == 0, "\(sealed.stderr)")
        tpm = nil
        let started = Date()
        for (command, input) in [(["seal"], KCTPM.secret()), (["unseal"], sealed.stdoutBytes)] {
            let out = try KCTPM.run(command, tcti: tcti, stdin: input, timeout: 20)
            #expect(out.status == exitCode(for: errSecNotAvailable), "\(command): \(out.stderr)")
            #expect(out.stderr.hasPrefix("kc: no TPM is reachable at \(tcti)"), "\(out.stderr)")
            #expect(out.stdoutBytes.isEmpty)
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// With KC_TPM_TCTI unset, kc-tpm tries the kernel's TPM devices only, never tpm2-tss's
    /// default search, which ends at swtpm / mssim on 127.0.0.1:2321, a port any local user
    /// can bind: a simulator listening there (one that seals when named) gets nothing, and
    /// kc-tpm says no TPM is reachable. Runs where the machine has no /dev/tpm* and 2321-2322
    /// are free (else the real device, or someone else's listener, would answer).
    @Test(
        .enabled(if: access("/dev/tpmrm0", F_OK) != 0 && access("/dev/tpm0", F_OK) != 0, "this machine has a TPM device"),
        .enabled(if: TestSWTPM.portPairFree(2321), "127.0.0.1:2321 or 2322 is taken: no swtpm of this test can listen there"))
    func withNoTCTINamedASimulatorOnTheDefaultPortIsNeverUsed() throws {
        let tpm = try TestSWTPM(port: 2321)
        let named = try KCTPM.run(["seal"], tcti: tpm.tcti, stdin: KCTPM.secret())
        try #require(named.status == 0, "the simulator on 2321 seals when named: \(named.stderr)")
        for command in ["seal", "unseal"] {
            let input = command == "seal" ? KCTPM.secret() : named.stdoutBytes
            let out = try Spawn.run([KCTPM.path, command], environment: ["PATH": "/usr/bin:/bin"], stdin: Data(input), timeout: 20)
            #expect(out.status == exitCode(for: errSecNotAvailable), "\(command), KC_TPM_TCTI unset: \(out.status) \(out.stderr)")
            #expect(out.stderr.contains("kc: no TPM is reachable (no /dev/tpmrm0 or /dev/tpm0"), "\(out.stderr)")
            #expect(out.stdoutBytes.isEmpty, "\(command) answered \(out.stdoutBytes.count) bytes")
        }
    }

    /// tpm2-tss's loader would dlopen a library named by file: KC_TPM_TCTI names one of
    /// the TCTIs kc-tpm loads, or nothing is loaded.
    @Test func aTCTIOtherThanTheKnownOnesIsNotLoaded() throws {
        let folder = NSTemporaryDirectory() + "/kc-tpm-tcti-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for tcti in [folder + "/libtss2-tcti-evil.so", "libtss2-tcti-cmd.so.0:swtpm", "cmd:swtpm socket", "pcap:swtpm"] {
            let out = try KCTPM.run(["seal"], tcti: tcti, stdin: KCTPM.secret(), timeout: 20)
            #expect(out.status == exitCode(for: errSecParam), "\(tcti): \(out.stderr)")
            #expect(out.stderr.hasPrefix("kc: KC_TPM_TCTI names a TCTI kc-tpm does not load"), "\(out.stderr)")
        }
    }

    @Test func aTPMThatNeverAnswersCostsTheTimeout() throws {
        // Both ports listen and never accept: the connection is made, nothing is answered.
        let port = try TestSWTPM.freePortPair()
        let (data, _) = try LoopbackTCP.listener(port)
        defer { close(data) }
        let (control, _) = try LoopbackTCP.listener(port + 1)
        defer { close(control) }
        let started = Date()
        let out = try KCTPM.run(["seal", "--timeout", "2"], tcti: "swtpm:host=127.0.0.1,port=\(port)", stdin: KCTPM.secret(), timeout: 20)
        let took = Date().timeIntervalSince(started)
        #expect(out.status == exitCode(for: errSecNotAvailable), "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: the TPM did not answer within 2 s"), "\(out.stderr)")
        #expect(took >= 1.5 && took < 10, "took \(took) s")
    }
}
