import Foundation
import Testing
import KeychainCore
import KeychainFuzz
import KCTestSupport

/// The fast part of the fuzzing (`make fuzz` is the long part, under libFuzzer and
/// AddressSanitizer): the seeds must be accepted (so the harness reaches the decoders), and
/// the kept corpus plus a seeded random run of mutations must all return.
@Suite struct FuzzTests {
    private static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/corpus").path

    @Test(arguments: FuzzTargets.Target.allCases)
    func seedsAreAcceptedAndMutationsReturn(_ target: FuzzTargets.Target) throws {
        let seeds = FuzzTargets.seeds(target)
        #expect(seeds.count >= 3)
        for seed in seeds {
            #expect(FuzzTargets.run(target, seed), "a \(target) seed was refused")
        }
        // The kept corpus (inputs libFuzzer found interesting) replays without a crash.
        let folder = Self.corpus + "/" + target.rawValue
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for file in files {
            if let bytes = FileManager.default.contents(atPath: folder + "/" + file) { FuzzTargets.run(target, Array(bytes)) }
        }
        // Seeded mutations: flips, truncations, insertions, splices, huge lengths.
        var rng = SplitMix64(seed: 0x6B63_F022 ^ UInt64(target.rawValue.utf8.count))
        var accepted = 0
        let runs = 20_000
        for _ in 0..<runs {
            var input = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let position = input.isEmpty ? 0 : Int(rng.next() % UInt64(input.count))
                switch rng.next() % 6 {
                case 0 where !input.isEmpty: input[position] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                case 1 where !input.isEmpty: input[position] = UInt8(truncatingIfNeeded: rng.next())
                case 2: input = Array(input.prefix(position))
                case 3: input.insert(contentsOf: [0xFF, 0xFF, 0xFF, 0x7F], at: position)
                case 4: input.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
                default:
                    let other = seeds[Int(rng.next() % UInt64(seeds.count))]
                    input = Array(input.prefix(position)) + other.suffix(max(0, other.count - position))
                }
            }
            if FuzzTargets.run(target, input) { accepted += 1 }
        }
        // Some mutations stay valid, most are refused: both paths ran.
        #expect(accepted > 0 && accepted < runs, "\(accepted) of \(runs) accepted")
    }
}
