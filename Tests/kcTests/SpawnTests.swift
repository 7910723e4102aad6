import Foundation
import KCTestSupport
import KeychainCore
import KeychainClient
import AgentWire
import POSIXSupport
import Synchronization
import Testing

/// The test run cannot hang: children have deadlines, and no child holds another's pipe
/// (issue 15: two `git-credential-kc` children each held the write end of the other's stdin).
@Suite struct SpawnTests {
    /// A child that never ends is killed with its process group after its deadline, and the
    /// failure carries what it printed on both streams.
    @Test func aChildPastItsDeadlineIsKilledAndReported() throws {
        let marker = FileManager.default.temporaryDirectory.path + "/kc-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(marker) }
        let start = Date()
        do {
            _ = try Spawn.run(
                ["/bin/sh", "-c", "sleep 1000 & echo $! > '\(marker)'; echo on-stdout; echo on-stderr >&2; wait"],
                environment: ["PATH": "/usr/bin:/bin"], timeout: 1)
            Issue.record("a child that sleeps for ever returned")
        } catch let timeout as SpawnTimeout {
            #expect(timeout.stdout == "on-stdout\n")
            #expect(timeout.stderr == "on-stderr\n")
            #expect(timeout.description.contains("on-stdout") && timeout.description.contains("on-stderr"))
        }
        #expect(Date().timeIntervalSince(start) < 10, "a hang costs seconds")
        // The grandchild went with its group.
        let pid = try #require(Int32(String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        var gone = false
        for _ in 0..<100 {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            if state == nil || state == "Z" { gone = true; break }
            usleep(20_000)
        }
        #expect(gone, "the background sleep \(pid) was killed with the group")
    }

    /// A child started while this test holds pipes open (its own, and another child's
    /// stdin) inherits none of them: it holds its three standard streams only.
    @Test func aChildInheritsNoOtherPipe() throws {
        let held = try #require(CloseOnExec.pipe())
        defer { for fd in held { close(fd) } }
        // Another test's child, blocked reading its stdin, meanwhile.
        let other = try Spawn.start(["/bin/cat"], environment: [:], stdin: Data("x".utf8), timeout: 20)
        var st = stat()
        #expect(fstat(held[0], &st) == 0)
        let inode = "pipe:[\(st.st_ino)]"
        let out = try Spawn.run(["/bin/ls", "-l", "/proc/self/fd"], environment: [:], timeout: 10)
        // "lrwx------ 1 root root 64 ... 3 -> /proc/123/fd" (ls's own directory) is skipped.
        var fds: Set<Int32> = []
        for line in out.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let arrow = fields.firstIndex(of: "->"), arrow > 0, arrow + 1 < fields.count else { continue }
            if fields[arrow + 1].hasPrefix("/proc/") { continue }
            if let fd = Int32(fields[arrow - 1]) { fds.insert(fd) }
        }
        #expect(!out.stdout.contains(inode), "the held pipe leaked: \(out.stdout)")
        #expect(fds.isSubset(of: [0, 1, 2]), "only fds 0-2 are inherited: \(out.stdout)")
        #expect(try other.finish().stdout == "x")
    }

    /// Many children fed stdin from many threads at once all finish (the original hang).
    @Test func childrenStartedOnManyThreadsAllFinish() throws {
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let out = try? Spawn.run(["/bin/cat"], environment: [:], stdin: Data("input \(i)".utf8), timeout: 20)
            if out?.stdout != "input \(i)" { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}
