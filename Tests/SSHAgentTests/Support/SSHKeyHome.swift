import Foundation
import KCTestSupport
import KeychainCore

/// A `KCHome` for the `kc ssh` key commands: a keychain, `ssh-keygen` run in the home's
/// folder, and the one function every key test runs the commands through.
final class SSHKeyHome {
    let home: KCHome
    var directory: String { home.directory }

    /// A fresh home with its default keychain.
    init() throws {
        home = try KCHome()
        try home.createKeychain()
    }

    /// The command line of `kc ssh ARGUMENTS`, as a user types it: kc execs kc-ssh beside
    /// it. Every key test runs through it.
    static func command(_ arguments: [String]) -> [String] { [KCBinary.path, "ssh"] + arguments }

    /// Runs `kc ssh ARGUMENTS` in the home's folder.
    func ssh(_ arguments: [String], password: String? = KCHome.password, extra: [String: String] = [:]) throws -> KCBinary.Output {
        var env = home.environment.merging(extra) { _, b in b }
        env["PATH"] = "/usr/bin:/bin"
        if let password { env["KC_PASSWORD"] = password }
        return try Spawn.run(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + Self.command(arguments), environment: env, timeout: 120)
    }

    /// Runs `kc ARGUMENTS`.
    func kc(_ arguments: [String], password: String? = nil) throws -> KCBinary.Output {
        try home.kc(arguments, password: password)
    }

    /// Runs a program (ssh-keygen, openssl) in the home's folder; fails the caller when it fails.
    @discardableResult
    func tool(_ arguments: [String]) throws -> KCBinary.Output {
        let out = try Spawn.run(
            ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory])
        guard out.status == 0 else {
            throw KeychainError(errSecInternalError, "\(arguments.joined(separator: " ")) failed (\(out.status)): \(out.stderr)")
        }
        return out
    }

    /// A new key made by ssh-keygen at `name` (`-N ''` unless `passphrase`), extra options first.
    func keygen(_ name: String, _ options: [String], passphrase: String = "", comment: String? = nil) throws {
        try tool(["ssh-keygen", "-q"] + options + ["-f", name, "-N", passphrase, "-C", comment ?? "comment-of-\(name)"])
    }

    /// The public key ssh-keygen derives from the private key file `name`: `TYPE BASE64`.
    func publicKey(_ name: String, passphrase: String = "") throws -> String {
        Self.typeAndKey(try tool(["ssh-keygen", "-y", "-P", passphrase, "-f", name]).stdout)
    }

    /// Writes `text` to a file in the home's folder; returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o600) throws -> String {
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, mode_t(mode))
        return path
    }

    /// The first two words (`TYPE BASE64`) of each line of a public-key listing.
    static func typeAndKey(_ text: String) -> String {
        text.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") }.joined(separator: "\n")
    }

    /// What a pty session (`Tests/kcTests/pty_session.py`) saw: exit status and screen.
    func pty(_ arguments: [String], answers: [[String]], password: String? = KCHome.password) throws -> (status: Int?, screen: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("kcTests/pty_session.py").path
        var env = home.environment.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a }
        if let password { env["KC_PASSWORD"] = password }
        let spec: [String: Any] = [
            "argv": ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + Self.command(arguments), "env": env, "steps": [], "answers": answers,
            "timeout": 60
        ]
        let file = directory + "/session-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 90)
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        return (session["status"] as? Int, session["screen"] as? String ?? "")
    }
}
