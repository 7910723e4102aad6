import Foundation
import KCTestSupport
import KeychainCore

/// A software TPM for one test: Debian's swtpm on two free ports of 127.0.0.1 (commands on
/// `port`, its control channel on `port + 1`) with a throwaway state folder, so each one is
/// another TPM with its own seeds. Killed, and its folder removed, when the test drops it.
final class TestSWTPM {
    let folder: String
    let port: Int
    private var child: SpawnedChild?

    /// The TCTI configuration that reaches it (KC_TPM_TCTI, tpm2-tools' -T).
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// - Parameter fixed: the command port to use (its control channel on the next), tried
    ///   once; nil for two free ports.
    init(port fixed: Int? = nil) throws {
        var template = Array((NSTemporaryDirectory() + "/kc-swtpm-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw KeychainError(errSecIO, "mkdtemp failed")
        }
        folder = String(cString: template.map { UInt8(bitPattern: $0) }.map { CChar(bitPattern: $0) })
        var failures: [String] = []
        for _ in 0..<(fixed == nil ? 5 : 1) {
            let p = try fixed ?? Self.freePortPair()
            let started = try Spawn.start(
                [
                    "/usr/bin/swtpm", "socket", "--tpm2", "--tpmstate", "dir=\(folder)",
                    "--server", "type=tcp,port=\(p),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(p + 1),bindaddr=127.0.0.1",
                    "--flags", "not-need-init,startup-clear"
                ],
                environment: ["PATH": "/usr/bin:/bin"], timeout: 600)
            // Something listens on P, and it is this swtpm: one that lost the race for the
            // port to another test's exits at once, and that test's swtpm is not ours.
            let listening = LoopbackTCP.waitForListener(p, seconds: 10)
            if listening { usleep(150_000) }
            if listening && Self.isRunning(started.pid) {
                port = p
                child = started
                return
            }
            failures.append(listening ? "swtpm on port \(p) exited (the port was taken)" : "swtpm on port \(p) did not listen within 10 s")
        }
        throw KeychainError(errSecIO, failures.joined(separator: "\n"))
    }

    deinit {
        child = nil   // SpawnedChild kills its process group and reaps it
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Whether 127.0.0.1:`port` and `port + 1` are both free now.
    static func portPairFree(_ port: Int) -> Bool {
        guard let (a, _) = try? LoopbackTCP.listener(port) else { return false }
        close(a)
        guard let (b, _) = try? LoopbackTCP.listener(port + 1) else { return false }
        close(b)
        return true
    }

    /// A port P of 127.0.0.1 such that P and P + 1 are both free now.
    static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let (fd, p) = try LoopbackTCP.listener(0)
            close(fd)
            guard p < 65535, let (next, _) = try? LoopbackTCP.listener(p + 1) else { continue }
            close(next)
            return p
        }
        throw KeychainError(errSecIO, "no two consecutive free ports")
    }

    /// Whether `pid` is alive and not a zombie (/proc/PID/stat's state).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != nil && state != "Z" && state != "X"
    }

    /// Runs a tpm2-tools program against this TPM (to inspect it, or extend a PCR).
    func tool(_ name: String, _ arguments: [String]) throws -> KCBinary.Output {
        try Spawn.run(["/usr/bin/" + name, "-T", tcti] + arguments, environment: ["PATH": "/usr/bin:/bin", "TSS2_LOG": "all+NONE"], timeout: 30)
    }

    /// A TPM property of `tpm2_getcap properties-variable`, such as TPM2_PT_LOCKOUT_COUNTER.
    func variable(_ property: String) throws -> Int {
        let out = try tool("tpm2_getcap", ["properties-variable"])
        guard out.status == 0 else { throw KeychainError(errSecIO, "tpm2_getcap failed (\(out.status)): \(out.stderr)") }
        for line in out.stdout.split(separator: "\n") where line.hasPrefix(property + ":") {
            let value = line.dropFirst(property.count + 1).trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("0x"), let n = Int(value.dropFirst(2), radix: 16) { return n }
            if let n = Int(value) { return n }
        }
        throw KeychainError(errSecIO, "tpm2_getcap printed no \(property):\n\(out.stdout)")
    }
}
