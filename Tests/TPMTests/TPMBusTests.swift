import Foundation
import KCTestSupport
import KeychainCore
import TPMSeal
import Testing

/// What crosses the TPM's bus: a relay between kc-tpm and swtpm records every byte of a
/// seal and an unseal with a PIN, with PCRs and without; neither the key nor the PIN nor
/// the PIN's hash (the object's authValue) is among them, in either direction. The blob's
/// public part, which TPM2_Load sends in clear, is: the recording is of the real traffic.
@Suite struct TPMBusTests {
    @Test(arguments: [[String](), ["--pcrs", "16"]])
    func neitherTheKeyNorThePINCrossesTheBusInClear(_ pcrs: [String]) throws {
        let tpm = try TestSWTPM()
        let bus = try BusRecorder(to: tpm)
        let secret = KCTPM.secret()
        let pin = "open sesame 4711"
        let sealed = try KCTPM.run(["seal"] + pcrs, tcti: bus.tcti, stdin: secret, pin: pin)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let opened = try KCTPM.run(["unseal"], tcti: bus.tcti, stdin: sealed.stdoutBytes, pin: pin)
        #expect(opened.status == 0 && opened.stdoutBytes == secret, "\(opened.stderr)")
        bus.stop()
        let crossed = bus.bytes
        let blob = try SealedBlob(sealed.stdoutBytes)
        // Booleans, so that a failure says what crossed without printing every byte.
        let loadSeen = Self.contains(crossed, Array(blob.publicArea.dropFirst(2)))
        #expect(loadSeen, "the relay recorded no TPM2_Load: \(crossed.count) bytes")
        let keyCrossed = Self.contains(crossed, secret), partCrossed = Self.contains(crossed, Array(secret.prefix(8)))
        #expect(!keyCrossed, "the key crossed the bus in clear")
        #expect(!partCrossed, "part of the key crossed the bus in clear")
        let pinCrossed = Self.contains(crossed, Array(pin.utf8))
        #expect(!pinCrossed, "the PIN crossed the bus in clear")
        let auth = try TPMSeal.authValue(Array(pin.utf8))
        #expect(auth.count == 32)
        let authCrossed = Self.contains(crossed, auth)
        #expect(!authCrossed, "the PIN's hash (the authValue) crossed the bus in clear")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle }
    }
}
