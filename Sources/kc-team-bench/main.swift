// kc-team-bench: the team keychain half of `make bench` (bench/team.sh); not installed.
//
// Members are CI runners of the benchmark's team (`kc team add-runner`), each named by a
// file holding its token; a member opened here has its own PostgreSQL connection and its
// own checkpoint folder under CHECKPOINTS, exactly as its own team agent would. Readers go
// through the running team agent of this HOME (KC_AGENT_DIR), as `kc find -w` does.
//
//   kc-team-bench populate CHECKPOINTS TOKEN COUNT [BATCH]
//       adds COUNT generic passwords (service svc-I, account acct-I) as TOKEN's member in
//       one write (Keychain.addAll: one signed log entry), or in writes of BATCH items each
//       (a log of COUNT / BATCH entries, as many small writes leave it); prints items/s.
//   kc-team-bench load NAME SECONDS READERS COUNT CHECKPOINTS TOKEN…
//       READERS threads ask the team agent for the secret of a random item of team:NAME
//       (one KeychainSession request each, svc-I/acct-I with I < COUNT) for SECONDS, while
//       one thread per TOKEN (another member, writer) adds a new item and updates it
//       again, over and over (with KC_TEAM_BENCH_WRITE_PAUSE_MS=M, pausing M ms before
//       each add and update pair). Prints the reads' latencies (p50, p99, max), reads and
//       errors, and the writes done and failed. With KC_TEAM_BENCH_READ_PAUSE_MS=M each
//       reader pauses M ms before each read (a reader that does other work between reads).
//   kc-team-bench writes SECONDS CHECKPOINTS TOKEN…
//       one thread per TOKEN (a writer member, its own connection) adds new items for
//       SECONDS; prints the total adds per second and the failures.
//   kc-team-bench readers NAME COUNT STOPFILE
//       one thread asks the team agent for random items until STOPFILE exists; prints the
//       latencies (p50, p99, max), reads and errors.
//
// Prints one JSON object. Times come from CLOCK_MONOTONIC.
import BenchSupport
import KeychainCore
import KeychainClient
import TeamCore
import TeamStore
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Ends the program with `message` on stderr.
func fail(_ message: String) -> Never { BenchOutput.fail("kc-team-bench", message) }

/// The generic password number `i` of the benchmark.
func item(_ i: Int) -> [String: Any] {
    [
        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecAttrAccount: "acct-\(i)",
        kSecValueData: Array("secret-\(i)-0123456789abcdef".utf8)
    ]
}

/// Opens the team keychain as the runner whose token is in `tokenFile`, with its own
/// connection and the checkpoint folder `checkpoints/<file name>`.
func openMember(tokenFile: String, checkpoints: String) throws -> Keychain {
    guard let text = readText(tokenFile) else { fail("cannot read \(tokenFile)") }
    let secret = try SecureBytes(copying: Array(text.utf8.filter { $0 > 32 }))
    let token = try RunnerToken.parse(secret)
    let dsn = token.dsn.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    let member = try MemberKeys(seed: token.seed.copy(prefix: token.seed.count))
    let folder = checkpoints + "/" + (tokenFile.split(separator: "/").last.map(String.init) ?? "member")
    mkdir(checkpoints, 0o700)
    mkdir(folder, 0o700)
    return try TeamKeychains.connect(
        name: token.name, keychainID: token.keychainID, dsn: dsn, insecure: false,
        member: member, checkpoints: folder
    ).keychain
}

/// The contents of a small file, or nil.
func readText(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}

/// What one thread recorded; read by the main thread only after joining it.
final class Record: @unchecked Sendable {
    /// Latencies in milliseconds.
    var latencies: [Double] = []
    /// Operations that succeeded and that failed.
    var done = 0, failed = 0
    /// The first failure, for the report on stderr.
    var firstError: String?
}

/// Runs `body` on a new thread, to join.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> BackgroundThread<Void> {
    do { return try BackgroundThread(body) } catch { fail("no thread: \(error)") }
}

/// A session on team:`name` through this HOME's team agent (never opened here).
func teamSession(_ name: String) throws -> KeychainSession {
    try KeychainSession(address: KeychainAddress(teamName: name), agent: AgentClient()) { path in
        throw KeychainError(errSecInteractionNotAllowed, "\(path) is locked")
    }
}

/// Reads random items through `session` while `running()` is true, into `record`.
func readLoop(_ session: KeychainSession, count: Int, seed: UInt64, record: Record, running: () -> Bool) {
    var rng = seed | 1
    let pause = getenv("KC_TEAM_BENCH_READ_PAUSE_MS").flatMap { Double(String(cString: $0)) } ?? 0
    while running() {
        if pause > 0 { usleep(UInt32(pause * 1000)) }
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
        let i = Int(rng % UInt64(count))
        let start = BenchClock.now()
        do {
            let value = try session.copyMatching([
                kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)",
                kSecAttrAccount: "acct-\(i)", kSecReturnData: true
            ])
            guard let data = value as? Data, data.count > 7 else { throw KeychainError(errSecDecode, "no secret for svc-\(i)") }
            record.latencies.append((BenchClock.now() - start) * 1000)
            record.done += 1
        } catch {
            record.failed += 1
            if record.firstError == nil { record.firstError = "\(error)" }
        }
    }
}

/// A flag the threads poll.
final class Flag: Sendable {
    private let value = Atomic<Bool>(true)
    /// Whether the run goes on.
    var running: Bool { value.load(ordering: .relaxed) }
    /// Ends the run.
    func stop() { value.store(false, ordering: .relaxed) }
}

/// The latency figures of several records pooled.
func latencyFigures(_ prefix: String, _ records: [Record]) -> [(String, Double)] {
    let all = records.flatMap(\.latencies).sorted()
    let failed = records.reduce(0) { $0 + $1.failed }
    for r in records { if let e = r.firstError { warn("\(prefix): \(e)"); break } }
    return [
        ("\(prefix)_count", Double(all.count)), ("\(prefix)_errors", Double(failed)),
        ("\(prefix)_p50_ms", BenchStatistics.quantile(all, 0.5)), ("\(prefix)_p99_ms", BenchStatistics.quantile(all, 0.99)),
        ("\(prefix)_max_ms", all.last ?? 0)
    ]
}

/// Writes a warning to stderr.
func warn(_ message: String) { BenchOutput.warn("kc-team-bench", message) }

/// Adds items `prefix-N` (and, when `update`, updates each once more) until `flag` stops.
func writeLoop(_ keychain: Keychain, prefix: String, update: Bool, record: Record, flag: Flag) {
    var n = 0
    let pause = getenv("KC_TEAM_BENCH_WRITE_PAUSE_MS").flatMap { Double(String(cString: $0)) } ?? 0
    while flag.running {
        if pause > 0 { usleep(UInt32(pause * 1000)) }
        n += 1
        let service = "\(prefix)-\(n)"
        let start = BenchClock.now()
        do {
            try keychain.add([
                kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: "writer",
                kSecValueData: Array("written-\(n)".utf8)
            ])
            record.done += 1
            if update {
                _ = try keychain.update(
                    [kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: "writer"],
                    [kSecValueData: Array("updated-\(n)".utf8)])
                record.done += 1
            }
            record.latencies.append((BenchClock.now() - start) * 1000)
        } catch {
            record.failed += 1
            if record.firstError == nil { record.firstError = "\(error)" }
        }
    }
}

/// One thread per writer member running `writeLoop` until `flag` stops, each into its record.
func startWriters(_ writers: [Keychain], prefix: String, update: Bool, records: [Record], flag: Flag) -> [BackgroundThread<Void>] {
    writers.enumerated().map { i, keychain in
        let record = records[i]
        nonisolated(unsafe) let writer = keychain
        return spawnThread { writeLoop(writer, prefix: "\(prefix)-\(getpid())-w\(i)", update: update, record: record, flag: flag) }
    }
}

let arguments = CommandLine.arguments
func usage() -> Never {
    fail(
        "usage: kc-team-bench populate CHECKPOINTS TOKEN COUNT [BATCH] | load NAME SECONDS READERS COUNT CHECKPOINTS TOKEN… | writes SECONDS CHECKPOINTS TOKEN… | readers NAME COUNT STOPFILE"
    )
}
guard arguments.count >= 2 else { usage() }

do {
    try Sodium.ensureReady()
    switch arguments[1] {
    case "populate":
        guard arguments.count == 5 || arguments.count == 6, let count = Int(arguments[4]), count > 0 else { usage() }
        let batch = arguments.count == 6 ? Int(arguments[5]) ?? 0 : count
        guard batch > 0 else { usage() }
        let keychain = try openMember(tokenFile: arguments[3], checkpoints: arguments[2])
        let start = BenchClock.now()
        for first in stride(from: 0, to: count, by: batch) {
            _ = try keychain.addAll((first..<min(first + batch, count)).lazy.map(item))
        }
        let seconds = BenchClock.now() - start
        BenchOutput.emit([("team_populate_items", Double(count)), ("team_populate_s", seconds), ("team_populate_items_per_s", Double(count) / seconds)])

    case "load":
        guard arguments.count >= 7, let seconds = Double(arguments[3]), let readers = Int(arguments[4]), let count = Int(arguments[5]) else { usage() }
        let name = arguments[2]
        let writers = try arguments[7...].map { try openMember(tokenFile: $0, checkpoints: arguments[6]) }
        let flag = Flag()
        var threads: [BackgroundThread<Void>] = []
        let readRecords = (0..<readers).map { _ in Record() }
        let writeRecords = writers.map { _ in Record() }
        let session = try teamSession(name)
        let start = BenchClock.now()
        for (i, record) in readRecords.enumerated() {
            threads.append(spawnThread { readLoop(session, count: count, seed: UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15, record: record) { flag.running } })
        }
        threads += startWriters(writers, prefix: "load", update: true, records: writeRecords, flag: flag)
        usleep(UInt32(seconds * 1_000_000))
        flag.stop()
        for t in threads { try t.join() }
        let elapsed = BenchClock.now() - start
        let writes = writeRecords.reduce(0) { $0 + $1.done }
        BenchOutput.emit(
            latencyFigures("read", readRecords) + [
                ("seconds", elapsed), ("readers", Double(readers)), ("writers", Double(writers.count)),
                ("reads_per_s", Double(readRecords.reduce(0) { $0 + $1.done }) / elapsed),
                ("writes", Double(writes)), ("writes_per_s", Double(writes) / elapsed),
                ("write_errors", Double(writeRecords.reduce(0) { $0 + $1.failed }))
            ])
        for r in writeRecords { if let e = r.firstError { warn("writer: \(e)"); break } }

    case "writes":
        guard arguments.count >= 5, let seconds = Double(arguments[2]) else { usage() }
        let writers = try arguments[4...].map { try openMember(tokenFile: $0, checkpoints: arguments[3]) }
        let flag = Flag()
        let records = writers.map { _ in Record() }
        let start = BenchClock.now()
        let threads = startWriters(writers, prefix: "rate", update: false, records: records, flag: flag)
        usleep(UInt32(seconds * 1_000_000))
        flag.stop()
        for t in threads { try t.join() }
        let elapsed = BenchClock.now() - start
        let adds = records.reduce(0) { $0 + $1.done }
        BenchOutput.emit(
            latencyFigures("add", records) + [
                ("writers", Double(writers.count)), ("seconds", elapsed),
                ("adds", Double(adds)), ("adds_per_s", Double(adds) / elapsed)
            ])

    case "readers":
        guard arguments.count == 5, let count = Int(arguments[3]) else { usage() }
        let session = try teamSession(arguments[2])
        let stopFile = arguments[4]
        let record = Record()
        let start = BenchClock.now()
        var polls = 0
        var exists = false
        readLoop(session, count: count, seed: 0x1234_5678, record: record) {
            polls += 1
            if polls % 16 == 0 { exists = access(stopFile, F_OK) == 0 }
            return !exists
        }
        BenchOutput.emit(latencyFigures("read", [record]) + [("seconds", BenchClock.now() - start)])

    default:
        usage()
    }
} catch {
    fail("\(error)")
}
