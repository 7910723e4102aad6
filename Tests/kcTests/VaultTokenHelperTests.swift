import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// kc-vault-token-helper, called exactly as Vault's ExternalTokenHelper calls it (there is no
/// Vault binary on Debian): `$SHELL -c "PATH OP"` with Vault's environment, the token
/// alone on stdin for `store`, stdout taken as the token for `get`, nonzero exit an error.
@Suite struct VaultTokenHelperTests {
    /// A fresh home with the helper as a link to the binary (as `make install` makes it)
    /// and, unless asked not to, an unlocked keychain.
    func home(unlock: Bool = true) throws -> (KCHome, String) {
        let h = try KCHome()
        try h.createKeychain()
        let helper = h.directory + "/kc-vault-token-helper"
        try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: KCBinary.path)
        h.environment["PATH"] = "/usr/bin:/bin"
        h.environment["SHELL"] = "/bin/sh"
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        return (h, helper)
    }

    /// One operation as Vault runs it: `/bin/sh -c "HELPER OP"`, the token (if any) on
    /// stdin with no line break, `env` added to the home's environment.
    func vault(_ h: KCHome, _ helper: String, _ op: String, _ env: [String: String] = [:], stdin: String? = nil) throws -> KCBinary.Output {
        try Spawn.run(["/bin/sh", "-c", helper + " " + op], environment: h.environment.merging(env) { _, b in b }, stdin: Data((stdin ?? "").utf8))
    }

    /// Two servers' tokens stored, read back byte for byte and erased without touching the
    /// other; the address matched as normalised; nothing stored: nothing printed, exit 0.
    @Test func roundTripForTwoServers() throws {
        let (h, helper) = try home()
        let a = ["VAULT_ADDR": "https://vault-a.example.com:8200"]
        let b = ["VAULT_ADDR": "https://vault-b.example.com"]
        let tokenA = "hvs.CAESIAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        let tokenB = "hvs.CAESIBbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
        var out = try vault(h, helper, "get", a)
        #expect(out.status == 0 && out.stdoutBytes.isEmpty && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try vault(h, helper, "store", a, stdin: tokenA)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        out = try vault(h, helper, "store", b, stdin: tokenB)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        out = try vault(h, helper, "get", a)
        #expect(out.status == 0 && out.stdoutBytes == Array(tokenA.utf8) && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try vault(h, helper, "get", b)
        #expect(out.status == 0 && out.stdoutBytes == Array(tokenB.utf8), "\(out.stdout)")
        // The same servers, written otherwise: case, the default port, a trailing slash.
        out = try vault(h, helper, "get", ["VAULT_ADDR": "HTTPS://Vault-A.Example.com:8200/"])
        #expect(out.stdoutBytes == Array(tokenA.utf8), "\(out.stdout)")
        out = try vault(h, helper, "get", ["VAULT_ADDR": "https://vault-b.example.com:443"])
        #expect(out.stdoutBytes == Array(tokenB.utf8), "\(out.stdout)")
        // Another port, another scheme, no VAULT_ADDR (Vault's default): other servers.
        for other in ["https://vault-a.example.com:8201", "http://vault-b.example.com"] {
            out = try vault(h, helper, "get", ["VAULT_ADDR": other])
            #expect(out.status == 0 && out.stdoutBytes.isEmpty, "\(other): \(out.stdout)")
        }
        out = try vault(h, helper, "get")
        #expect(out.status == 0 && out.stdoutBytes.isEmpty, "\(out.stdout)")
        // A line break from `echo` is not part of the token; the default server's key.
        out = try vault(h, helper, "store", stdin: "s.local\n")
        #expect(out.status == 0)
        out = try vault(h, helper, "get", ["VAULT_ADDR": "https://127.0.0.1:8200"])
        #expect(out.stdoutBytes == Array("s.local".utf8), "\(out.stdout)")
        // OpenBao's variable, alone, is the address; both naming different servers: refused.
        out = try vault(h, helper, "get", ["BAO_ADDR": "https://vault-a.example.com:8200"])
        #expect(out.stdoutBytes == Array(tokenA.utf8), "\(out.stdout)")
        out = try vault(h, helper, "get", ["BAO_ADDR": "https://vault-a.example.com:8200", "VAULT_ADDR": "https://vault-b.example.com"])
        #expect(out.status != 0 && out.stdoutBytes.isEmpty && out.stderr.split(separator: "\n").count == 1, "\(out.stdout) \(out.stderr)")
        // Ordinary kc items: kc find shows them (never the token without -w).
        out = try h.kc(["find", "-s", "vault:https://vault-a.example.com:8200", "-a", "token"])
        #expect(out.status == 0 && out.stdout.contains("Vault token") && !out.stdout.contains(tokenA), "\(out.stdout)")
        out = try h.kc(["find", "-s", "vault:https://vault-b.example.com", "-a", "token", "-w"])
        #expect(out.stdout == tokenB, "\(out.stdout)")
        // A new token replaces the old one.
        out = try vault(h, helper, "store", b, stdin: tokenB + "2")
        #expect(out.status == 0)
        #expect(try vault(h, helper, "get", b).stdoutBytes == Array((tokenB + "2").utf8))
        // erase: that server's token only; erasing nothing succeeds.
        out = try vault(h, helper, "erase", a)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        out = try vault(h, helper, "get", a)
        #expect(out.status == 0 && out.stdoutBytes.isEmpty, "\(out.stdout)")
        #expect(try vault(h, helper, "get", b).stdoutBytes == Array((tokenB + "2").utf8))
        out = try vault(h, helper, "erase", a)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        // An empty token, an unknown operation: an error, nothing stored.
        out = try vault(h, helper, "store", a, stdin: "")
        #expect(out.status != 0 && out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        out = try vault(h, helper, "list", a)
        #expect(out.status == 2 && out.stdoutBytes.isEmpty, "\(out.stderr)")
    }

    /// Locked, no terminal (setsid), no password: fails in well under a second, one line on
    /// stderr naming `kc unlock`, a nonzero exit, and the token on stdin never echoed.
    @Test func lockedKeychainWithoutATerminal() throws {
        let (h, helper) = try home(unlock: false)
        let token = "hvs.lockedTOKENvalue123"
        for (op, input) in [("get", ""), ("store", token), ("erase", "")] {
            let started = Date()
            let out = try Spawn.run(
                ["/usr/bin/setsid", "-w", "/bin/sh", "-c", helper + " " + op],
                environment: h.environment.merging(["VAULT_ADDR": "https://v.example.com"]) { _, b in b },
                stdin: Data(input.utf8), timeout: 5)
            let elapsed = Date().timeIntervalSince(started)
            #expect(out.status == 36, "\(op): \(out.status) \(out.stderr)")
            #expect(elapsed < 1.0, "\(op) took \(elapsed) s")
            #expect(out.stdoutBytes.isEmpty, "\(op): \(out.stdout)")
            #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("kc unlock"), "\(op): \(out.stderr)")
            #expect(!out.stderr.contains(token))
        }
        // Nothing was stored.
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let out = try vault(h, helper, "get", ["VAULT_ADDR": "https://v.example.com"])
        #expect(out.status == 0 && out.stdoutBytes.isEmpty, "\(out.stdout)")
    }

    /// Vault's DefaultTokenHelper gives the helper `VAULT_ADDR` as its only variable: no
    /// HOME. The helper then takes the home from the password database (run as uid 65534,
    /// whose home, /nonexistent, holds no keychain, so nothing real is read): the one line
    /// names that keychain, not one under `/`.
    @Test(.enabled(if: getuid() == 0, "acts as another account"))
    func vaultsOneVariableEnvironmentFindsTheHomeFromThePasswordDatabase() throws {
        let h = try KCHome(base: OtherUser.base)
        #expect(chown(h.directory, OtherUser.uid, OtherUser.uid) == 0)
        let kc = try #require(try OtherUser.install(["kc"], into: h.directory + "/bin")["kc"])
        let helper = h.directory + "/bin/kc-vault-token-helper"
        try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: kc)
        let home = try #require(getpwuid(OtherUser.uid).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } })
        let out = try Spawn.run(
            OtherUser.setpriv + ["/bin/sh", "-c", helper + " get"], environment: ["VAULT_ADDR": "https://vault.example.com:8200"], timeout: 10)
        #expect(out.status == 50 && out.stdoutBytes.isEmpty, "\(out.status) \(out.stderr)")
        #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains(home + "/.local/share/kc/"), "\(out.stderr)")
    }

    /// Locked, on a terminal: the helper asks for the password there, as kc's other
    /// commands do, then prints the token (`pty_session.py`).
    @Test func lockedKeychainOnATerminalAsks() throws {
        let (h, helper) = try home(unlock: false)
        let token = "hvs.askedTOKEN42"
        #expect(try h.kc(["add", "-s", "vault:https://v.example.com", "-a", "token", "-w", token], password: KCHome.password).status == 0)
        _ = try h.kc(["lock"])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path
        let spec: [String: Any] = [
            "argv": ["/bin/sh", "-c", helper + " get"],
            "env": h.environment.merging(["TERM": "dumb", "VAULT_ADDR": "https://v.example.com/"]) { _, b in b },
            "steps": [["expect", "assword"], ["send", KCHome.password + "\n"]], "answers": [], "timeout": 30
        ]
        let file = h.directory + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"])
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        let screen = session["screen"] as? String ?? ""
        #expect(session["status"] as? Int == 0, "\(screen) \(out.stderr)")
        #expect(screen.hasSuffix(token), "the token last, with no line break: \(screen)")
        #expect((session["echo_off"] as? [Bool]) == [true], "\(screen)")
    }

    /// Found by attacking the helpers: run with no operation, the helper printed kc's own
    /// short usage (`kc add …`). It prints its own, naming the operations Vault runs it
    /// with: on stderr with exit 2 for none or an unknown one, on stdout for `--help`.
    @Test func itsOwnUsage() throws {
        let (h, helper) = try home()
        for op in ["", "list", "get extra"] {
            let out = try vault(h, helper, op)
            #expect(out.status == 2 && out.stdoutBytes.isEmpty, "\(op): \(out.status) \(out.stdout)")
            #expect(out.stderr.hasPrefix("usage: kc-vault-token-helper [-k KEYCHAIN] get|store|erase\n"), "\(op): \(out.stderr)")
            #expect(out.stderr.contains("VAULT_ADDR") && !out.stderr.contains("kc add"), "\(op): \(out.stderr)")
        }
        let help = try vault(h, helper, "--help")
        #expect(help.status == 0 && help.stderr.isEmpty && help.stdout.hasPrefix("usage: kc-vault-token-helper"), "\(help.stdout) \(help.stderr)")
    }
}
