// libFuzzer's entry points for `make fuzz` (fuzz/fuzz.sh), linked with KeychainCore,
// POSIXSupport, AgentWire and the KeychainFuzz targets, all built with
// -sanitize=fuzzer,address; KeychainFuzz reaches the decoders through `package` access.
// KC_FUZZ_TARGET chooses the decoder: query, agent, row, der or ssh (FuzzTargets.swift).
import KeychainFuzz
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) private var fuzzTarget = FuzzTargets.Target.query

@_cdecl("LLVMFuzzerInitialize")
public func kcFuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    let name = getenv("KC_FUZZ_TARGET").map { String(cString: $0) } ?? "query"
    guard let target = FuzzTargets.Target(rawValue: name) else {
        fputs("kc-fuzz: KC_FUZZ_TARGET must be query, agent, row, der or ssh\n", stderr)
        exit(2)
    }
    fuzzTarget = target
    // KC_FUZZ_WRITE_SEEDS=DIR: write the target's seeds there and stop.
    if let dir = getenv("KC_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) {
        for (i, seed) in FuzzTargets.seeds(target).enumerated() {
            guard let file = fopen("\(dir)/seed-\(i)", "wb") else { exit(1) }
            _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
        exit(0)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func kcFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTargets.run(fuzzTarget, bytes)
    return 0
}
