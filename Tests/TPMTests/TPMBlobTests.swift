import Foundation
import KCTestSupport
import KeychainCore
import TPMSeal
import Testing

/// The blob's reader (`SealedBlob`) on a real blob cut and mutated in-process: it never
/// crashes, refuses with errSecDecode (or errSecWrongSecVersion for the version byte), and
/// what it accepts is exactly one encoding: read back, it writes the same bytes.
@Suite struct TPMBlobTests {
    static func realBlob(pin: String? = nil, pcrs: [String] = []) throws -> [UInt8] {
        let tpm = try TestSWTPM()
        let sealed = try KCTPM.run(["seal"] + pcrs, tcti: tpm.tcti, stdin: KCTPM.secret(), pin: pin)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        return sealed.stdoutBytes
    }

    /// Parses `bytes`: nil when refused with a status a damaged blob may have.
    static func parse(_ bytes: [UInt8]) -> SealedBlob? {
        do {
            return try SealedBlob(bytes)
        } catch {
            #expect(error.status == errSecDecode || error.status == errSecWrongSecVersion, "\(error)")
            return nil
        }
    }

    @Test func aRealBlobReadsBackToItsOwnBytes() throws {
        for (pin, pcrs) in [(nil, [String]()), ("2468", ["--pcrs", "0,7"])] {
            let bytes = try Self.realBlob(pin: pin, pcrs: pcrs)
            let blob = try #require(Self.parse(bytes))
            #expect(blob.bytes == bytes)
            #expect(blob.hasPIN == (pin != nil))
            #expect(blob.pcrMask == (pcrs.isEmpty ? 0 : 1 << 0 | 1 << 7))
            #expect(blob.policyDigest.count == (pcrs.isEmpty ? 0 : 32))
        }
    }

    @Test func everyTruncationIsRefused() throws {
        let bytes = try Self.realBlob()
        for length in 0..<bytes.count {
            #expect(Self.parse(Array(bytes.prefix(length))) == nil, "cut to \(length) was accepted")
        }
    }

    @Test func seededMutationsNeverCrashAndWhatIsAcceptedIsCanonical() throws {
        let bytes = try Self.realBlob(pin: "1357", pcrs: ["--pcrs", "16"])
        var random = SplitMix64(seed: 0x6B63_5450)
        var accepted = 0
        for _ in 0..<20_000 {
            var mutated = bytes
            for _ in 0...Int.random(in: 0..<4, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: mutated[Int.random(in: 0..<mutated.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                case 1: mutated.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...mutated.count, using: &random))
                case 2 where mutated.count > 1: mutated.remove(at: Int.random(in: 0..<mutated.count, using: &random))
                default: mutated[Int.random(in: 0..<mutated.count, using: &random)] = [0, 0xFF, 0x7F, 0x80].randomElement(using: &random) ?? 0
                }
            }
            if let blob = Self.parse(mutated) {
                accepted += 1
                #expect(blob.bytes == mutated, "an accepted blob does not read back to its bytes")
            }
        }
        // Bytes inside the public and private parts change what they hold, not their shape:
        // some mutations are accepted here and left to the TPM (TPMFailureTests).
        #expect(accepted < 20_000)
    }
}
