import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport

/// A fresh home and agent folder with kc's SSH agent serving in the foreground (killed with
/// the fixture), and the OpenSSH programs run against it with deadlines.
final class SSHAgentFixture {
    let home: KCHome
    let agent: SpawnedChild
    /// The agent folder (KC_AGENT_DIR).
    var agentDirectory: String { home.environment["KC_AGENT_DIR"] ?? "" }
    /// The agent's socket.
    var socket: String { agentDirectory + "/ssh-agent.sock" }
    /// A folder for keys and configuration.
    var folder: String { home.directory }

    /// kc-ssh, built beside kc.
    static var program: String {
        URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().appendingPathComponent("kc-ssh").path
    }

    /// Starts the agent with `extra` environment (none: no display, so nobody can confirm)
    /// in `home` (a fresh one when nil), as `kc-ssh ssh-agent`, or as a user starts it,
    /// `kc ssh-agent`, when `throughKC`.
    init(home: KCHome? = nil, extra: [String: String] = [:], throughKC: Bool = false) throws {
        self.home = try home ?? KCHome()
        try FileManager.default.createDirectory(atPath: self.home.directory + "/agent", withIntermediateDirectories: true)
        chmod(self.home.directory + "/agent", 0o700)
        var env = self.home.environment.merging(extra) { _, b in b }
        env["PATH"] = "/usr/bin:/bin"
        let program = throughKC ? [KCBinary.path] : [Self.program]
        agent = try Spawn.start(program + ["ssh-agent", "--foreground"], environment: env, timeout: 300)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socket), (try? UnixSocket.connect(to: socket)) != nil { return }
            usleep(20_000)
        }
        throw KeychainError(errSecIO, "kc's SSH agent did not listen at \(socket)")
    }

    /// The environment of a client of the agent.
    var clientEnvironment: [String: String] {
        ["HOME": home.directory, "PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socket]
    }

    /// Runs a program as a client of the agent.
    @discardableResult
    func run(_ argv: [String], extra: [String: String] = [:], stdin: Data? = nil, timeout: Double = 60) throws -> KCBinary.Output {
        try Spawn.run(argv, environment: clientEnvironment.merging(extra) { _, b in b }, stdin: stdin, timeout: timeout)
    }

    /// Makes an unencrypted key file of `type` (`ed25519`, `ecdsa` with `bits`, `rsa`) and
    /// returns its path; its public half is PATH.pub.
    func makeKey(_ name: String, type: String, bits: Int? = nil) throws -> String {
        let path = folder + "/" + name
        var argv = ["/usr/bin/ssh-keygen", "-q", "-t", type, "-N", "", "-C", name, "-f", path]
        if let bits { argv += ["-b", String(bits)] }
        let out = try Spawn.run(argv, environment: ["PATH": "/usr/bin:/bin", "HOME": folder], timeout: 120)
        guard out.status == 0 else { throw KeychainError(errSecIO, "ssh-keygen failed: \(out.stderr)") }
        return path
    }

    /// The public key line of a key file (`ssh-keygen -y` wrote PATH.pub).
    func publicLine(_ path: String) throws -> String {
        try String(contentsOfFile: path + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The public blob of a key file.
    func publicBlob(_ path: String) throws -> [UInt8] {
        let fields = try publicLine(path).split(separator: " ")
        guard fields.count >= 2, let data = Data(base64Encoded: String(fields[1])) else { throw KeychainError(errSecParam, "bad public key") }
        return Array(data)
    }

    /// `ssh-add FILE` with options; asserts nothing.
    func sshAdd(_ arguments: [String]) throws -> KCBinary.Output {
        try run(["/usr/bin/ssh-add"] + arguments)
    }

    /// Sends one raw message and returns the reply's payload (nil when the agent closed).
    func exchange(_ payload: [UInt8], on connection: UnixSocket? = nil) throws -> [UInt8]? {
        guard let c = try connection ?? UnixSocket.connect(to: socket) else { throw KeychainError(errSecIO, "no agent") }
        let length = UInt32(payload.count)
        let frame = [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + payload
        try c.writeAll(frame, until: .after(seconds: 10))
        var header = [UInt8](repeating: 0, count: 4)
        do {
            try header.withUnsafeMutableBytes { try c.readExactly(4, into: $0, until: .after(seconds: 10)) }
        } catch {
            return nil
        }
        let count = header.reduce(0) { $0 << 8 | Int($1) }
        var body = [UInt8](repeating: 0, count: count)
        try body.withUnsafeMutableBytes { try c.readExactly(count, into: $0, until: .after(seconds: 10)) }
        return body
    }
}

/// SSH wire helpers for raw messages in tests.
enum Wire {
    static func string(_ bytes: [UInt8]) -> [UInt8] {
        let n = UInt32(bytes.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }
    static func string(_ text: String) -> [UInt8] { string(Array(text.utf8)) }
    static func uint32(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] }
}
