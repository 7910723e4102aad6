import Foundation
import KeychainCore
import KCTestSupport

/// A `KCHome` for team keychains without PostgreSQL: this device's team file (its
/// presence is all kc looks at), the team agent's socket and program, a pty session.
struct TeamHome {
    let home: KCHome

    init() throws { home = try KCHome() }

    /// The `kc-team` built beside the tested kc.
    static var teamProgram: String {
        URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().appendingPathComponent("kc-team").path
    }

    /// The team agent's socket and lock.
    var teamSocket: String { home.directory + "/agent/team-agent.sock" }
    var teamLock: String { home.directory + "/agent/team-agent.lock" }
    /// The file agent's socket.
    var fileSocket: String { home.directory + "/agent/agent.sock" }

    /// Puts a team file for `name` where kc looks for it (`$XDG_DATA_HOME/kc/teams`).
    /// Its content does not matter to kc: only kc-team reads it.
    func makeTeamFile(_ name: String) throws {
        let folder = home.directory + "/data/kc/teams"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data("not a real team file\n".utf8).write(to: URL(fileURLWithPath: folder + "/\(name).team"))
        chmod(folder + "/\(name).team", 0o600)
    }

    /// Runs kc with this home's environment.
    func kc(_ arguments: [String], password: String? = nil, stdin: Data? = nil, extra: [String: String] = [:]) throws -> KCBinary.Output {
        try home.kc(arguments, password: password, stdin: stdin, extra: extra)
    }

    /// The pid written in the team agent's lock file, when its socket exists.
    func teamAgentPID() -> Int32? {
        guard FileManager.default.fileExists(atPath: teamSocket),
            let text = try? String(contentsOfFile: teamLock, encoding: .utf8)
        else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Waits up to 5 s for `condition`.
    func wait(_ condition: () -> Bool) -> Bool {
        for _ in 0..<100 {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// What a pty session (`Tests/kcTests/pty_session.py`) saw.
    struct PtySession: Decodable {
        var status: Int
        var screen: String
        var echo_off: [Bool]
    }

    static let ptyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("kcTests/pty_session.py").path

    /// Runs kc on a pseudo-terminal (its controlling terminal), typing `answers` at prompts.
    func onTerminal(_ arguments: [String], answers: [[String]] = [], env: [String: String] = [:]) throws -> PtySession {
        let spec: [String: Any] = [
            "argv": [KCBinary.path] + arguments,
            "env": home.environment.merging(env) { _, b in b }.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a },
            "steps": [[String]](), "answers": answers, "timeout": 30
        ]
        let file = home.directory + "/session-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", Self.ptyScript, file], environment: ["PATH": "/usr/bin:/bin"])
        return try JSONDecoder().decode(PtySession.self, from: Data(out.stdoutBytes))
    }
}
