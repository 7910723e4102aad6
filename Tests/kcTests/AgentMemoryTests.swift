import Foundation
import KCTestSupport
import Testing

/// docs/protocol.md: "The password crosses the socket once per unlock, is copied into
/// secure memory and wiped after the key derivation." Checked in the agent's memory.
@Suite struct AgentMemoryTests {
    /// Counts the occurrences of `needle` in the writable memory of `pid` (as root, who may
    /// read a non-dumpable process's memory).
    static func occurrences(of needle: String, in pid: Int32) throws -> Int {
        let script = """
            import sys, re
            pid, needle = sys.argv[1], sys.argv[2].encode()
            found = 0
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
                for line in maps:
                    fields = line.split()
                    if "w" not in fields[1]: continue
                    start, end = (int(x, 16) for x in fields[0].split("-"))
                    try:
                        mem.seek(start); chunk = mem.read(end - start)
                    except (OSError, ValueError, OverflowError):
                        continue
                    found += chunk.count(needle)
            print(found)
            """
        let out = try Spawn.run(["/usr/bin/python3", "-c", script, String(pid), needle], environment: ["PATH": "/usr/bin:/bin"])
        return Int(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The unlock request's body (path, password, timeouts) was copied out of the received
    /// frame and never wiped: the password stayed readable in the agent's heap for as long
    /// as the allocator left that chunk alone.
    @Test(.enabled(if: geteuid() == 0, "needs root to read the non-dumpable agent's memory"))
    func theUnlockPasswordDoesNotStayInTheAgentsMemory() throws {
        let password = "agent-memory-" + (0..<24).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
        let h = try KCHome()
        #expect(try h.kc(["create", "--kdf", "interactive"], password: password).status == 0)
        let out = try h.kc(["unlock"], password: password)
        #expect(out.status == 0, "\(out.stderr)")
        let text = try String(contentsOfFile: h.directory + "/agent/agent.lock", encoding: .utf8)
        let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(pid > 0)
        // Served requests after the unlock must not have been needed to make it vanish.
        #expect(try Self.occurrences(of: password, in: pid) == 0, "the password is still in the agent's memory")
        #expect(try h.kc(["find", "-s", "nothing"]).status == 44, "the agent holds the keychain")
    }
}
