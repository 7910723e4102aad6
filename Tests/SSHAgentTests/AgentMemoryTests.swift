import Foundation
import KCTestSupport
import KeychainCore
import SSHAgent
import Testing

/// "Removed keys are wiped": after `ssh-add` of RSA, ECDSA and Ed25519 keys, three
/// signatures with each and `ssh-add -D`, no copy of a private number (big-endian as on the wire, or
/// little-endian as in a libcrypto BIGNUM) is left anywhere in the agent's memory. Read as
/// root reads it, /proc/PID/mem (the test runs as root; skipped otherwise).
@Suite struct AgentMemoryTests {
    /// 16-byte windows from the middle of each private field, both byte orders.
    static func needles(_ field: [UInt8]) -> [[UInt8]] {
        let k = max(0, field.count / 2 - 8)
        return [Array(field[k..<min(field.count, k + 16)]), Array(Array(field.reversed())[k..<min(field.count, k + 16)])]
    }

    /// The private fields of a key file's wire form: Ed25519's seed, ECDSA's d, RSA's d, p, q.
    static func privateFields(_ path: String) throws -> [[UInt8]] {
        let wire = try SSHKeyFile(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).privateKey(passphrase: nil).key.wire
        let f = AddValidationTests.fields(wire).map { Array($0.drop { $0 == 0 }) }
        switch String(decoding: f[0], as: UTF8.self) {
        case "ssh-ed25519": return [Array(f[2].prefix(32))]
        case "ssh-rsa": return [f[3], f[5], f[6]]
        default: return [f[3]]
        }
    }

    /// Which needles are in the readable memory of `pid` (python3 reads /proc/PID/mem one
    /// mapping at a time). - Throws: when nothing could be read (no proof of anything).
    static func found(_ needles: [[UInt8]], in pid: Int32) throws -> [Int] {
        let script = """
            import os, sys
            pid = int(sys.argv[1]); needles = [bytes.fromhex(h) for h in sys.argv[2:]]
            fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY); total = 0; hits = set()
            for line in open("/proc/%d/maps" % pid).read().splitlines():
                f = line.split()
                if not f[1].startswith("r") or line.endswith("[vvar]") or line.endswith("[vsyscall]"): continue
                a, b = [int(x, 16) for x in f[0].split("-")]
                try: m = os.pread(fd, b - a, a)
                except OSError: continue
                total += len(m)
                hits.update(i for i, n in enumerate(needles) if n in m)
            print(total); print(" ".join(str(i) for i in sorted(hits)))
            """
        let hex = needles.map { $0.map { String(format: "%02x", $0) }.joined() }
        let out = try Spawn.run(["/usr/bin/python3", "-c", script, String(pid)] + hex, environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard out.status == 0, let total = lines.first.flatMap({ Int($0) }), total > 0 else {
            throw KeychainError(errSecIO, "could not read the agent's memory: \(out.stderr)")
        }
        return lines.dropFirst().first?.split(separator: " ").compactMap { Int($0) } ?? []
    }

    @Test(.enabled(if: geteuid() == 0)) func removedKeysLeaveNoPrivateBytesInTheAgent() throws {
        let f = try SSHAgentFixture()
        var needles: [[UInt8]] = []
        for (name, type) in [("rsa", "rsa"), ("ec", "ecdsa"), ("ed", "ed25519")] {
            let key = try f.makeKey(name, type: type)
            needles += try Self.privateFields(key).flatMap(Self.needles)
            #expect(try f.sshAdd([key]).status == 0)
            try Data("message".utf8).write(to: URL(fileURLWithPath: f.folder + "/msg-" + name))
            for _ in 0..<3 {
                try? FileManager.default.removeItem(atPath: f.folder + "/msg-" + name + ".sig")
                let signed = try f.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", key + ".pub", f.folder + "/msg-" + name])
                #expect(signed.status == 0, "\(signed.stderr)")
            }
        }
        // Held: the keys are in the agent (guarded memory), so the scan finds them.
        #expect(!(try Self.found(needles, in: f.agent.pid)).isEmpty, "the scan finds nothing even while the keys are held")
        #expect(try f.sshAdd(["-D"]).status == 0)
        let left = try Self.found(needles, in: f.agent.pid)
        #expect(left.isEmpty, "private bytes left in the agent's memory: needles \(left)")
    }
}
