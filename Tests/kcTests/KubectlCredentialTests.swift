import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// `kc kube-credential` with the real kubectl against a local HTTPS stand-in for the API
/// server (kube_https_server.py, a throwaway self-signed certificate made with openssl) that
/// records the Authorization header and client certificate of every request.
@Suite struct KubectlCredentialTests {
    static let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("kube_https_server.py").path
    static let v1 = #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#

    /// A home with kc on PATH, an unlocked keychain, server and client certificates, the
    /// server started (killed by the script's trap, and by itself after 60 s), and
    /// `$KUBECONFIG` naming `kube/config`.
    func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/kc", withDestinationPath: KCBinary.path)
        // kubectl, openssl and python3 from the runner's PATH (so a run can choose its kubectl).
        h.environment["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        h.environment["KUBECONFIG"] = h.directory + "/kube/config"
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let out = try sh(
            h,
            """
            mkdir -m 700 kube tls && cd tls || exit 1
            openssl req -x509 -newkey rsa:2048 -nodes -keyout server.key -out server.pem -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null || exit 2
            openssl req -x509 -newkey rsa:2048 -nodes -keyout client.key -out client.pem -days 1 -subj /CN=kc-client -addext extendedKeyUsage=clientAuth 2>/dev/null || exit 3
            """)
        #expect(out.status == 0, "\(out.stderr)")
        return h
    }

    /// Runs `script` in the home with the server running: `$PORT` is its port and
    /// tls/requests.log what it received. kube/config (0600) is written first, byte for byte
    /// as `kubectl config` writes it: cluster `c` (its CA embedded), context `x`, and user
    /// `dev` with the settings lines `user` (shell-expanded, at four spaces). Written by hand:
    /// Debian 12's kubectl 1.20 panics on `kubectl config set-credentials`.
    func withServer(_ h: KCHome, user: [String], _ script: String) throws -> KCBinary.Output {
        try sh(
            h,
            """
            timeout 60 python3 '\(Self.server)' tls & SPID=$!
            trap 'kill $SPID 2>/dev/null' EXIT
            i=0; while [ ! -f tls/port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
            PORT=$(cat tls/port) || exit 90
            CA=$(base64 -w0 tls/server.pem) || exit 91
            cat > kube/config <<EOF || exit 92
            apiVersion: v1
            clusters:
            - cluster:
                certificate-authority-data: $CA
                server: https://127.0.0.1:$PORT
              name: c
            contexts:
            - context:
                cluster: c
                user: dev
              name: x
            current-context: x
            kind: Config
            preferences: {}
            users:
            - name: dev
              user:
            \(user.map { "    " + $0 }.joined(separator: "\n"))
            EOF
            chmod 600 kube/config || exit 92
            \(script)
            """)
    }

    func sh(_ h: KCHome, _ script: String) throws -> KCBinary.Output {
        try Spawn.run(["/bin/sh", "-c", "cd '\(h.directory)' || exit 99\n" + script], environment: h.environment, timeout: 90)
    }

    func read(_ h: KCHome, _ name: String) -> String {
        (try? String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)) ?? ""
    }

    /// A stored token reaches the API server as a bearer token through kubectl's exec
    /// plugin; the plugin echoes the apiVersion kubectl sends and the stored expiry.
    @Test func storedTokenReachesTheServer() throws {
        let h = try home()
        var out = try h.kc(["kube-credential", "dev", "--store", "--expires", "2030-01-31T12:00:00Z"], stdin: Data("tok-Stored-9f3e\n".utf8))
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["kube-credential", "dev"], extra: ["KUBERNETES_EXEC_INFO": Self.v1])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(
            out.stdout
                == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-Stored-9f3e","expirationTimestamp":"2030-01-31T12:00:00Z"}}"#
                + "\n")
        out = try h.kc(["kube-credential", "dev"])
        #expect(out.stdout.hasPrefix(#"{"apiVersion":"client.authentication.k8s.io/v1beta1","#), "\(out.stdout)")
        // An ordinary item: kc find shows it.
        out = try h.kc(["find", "-s", "kube:dev", "-w"])
        #expect(out.stdout == "tok-Stored-9f3e", "\(out.stderr)")
        out = try withServer(
            h,
            user: [
                "exec:", "  apiVersion: client.authentication.k8s.io/v1beta1", "  args:", "  - kube-credential", "  - dev", "  command: kc", "  env: null",
                "  provideClusterInfo: false"
            ],
            """
            kubectl get --raw /version
            """)
        #expect(out.status == 0, "\(out.stdout) \(out.stderr)")
        #expect(out.stdout.contains("v1.20.2"))
        #expect(read(h, "tls/requests.log").contains("/version auth=Bearer tok-Stored-9f3e"), "\(read(h, "tls/requests.log"))")
        out = try h.kc(["kube-credential", "dev", "--store", "--expires", "tomorrow"], stdin: Data("x".utf8))
        #expect(out.status != 0 && out.stderr.contains("RFC 3339"))
    }

    /// `--import` moves a token as `kubectl config set-credentials` writes it into kc; the
    /// kubeconfig keeps its mode, holds the exec stanza and no token, no stray file is left,
    /// and kubectl still authenticates with the token.
    @Test func importMovesTheTokenOutOfTheKubeconfig() throws {
        let h = try home()
        let token = "imp0rted-Token-7d1c"
        let out = try withServer(
            h,
            user: ["token: \(token)"],
            """
            chmod 640 kube/config
            kc kube-credential --import kube/config dev || exit 94
            ls -A kube
            stat -c %a kube/config
            kubectl get --raw /version
            """)
        #expect(out.status == 0, "\(out.stdout) \(out.stderr)")
        #expect(out.stdout.hasPrefix("config\n640\n"), "\(out.stdout)")
        #expect(out.stderr.contains("moved user `dev`'s token") && !out.stderr.contains(token), "\(out.stderr)")
        let config = read(h, "kube/config")
        #expect(!config.contains(token) && !config.contains("token:"), "\(config)")
        #expect(config.contains("exec:") && config.contains("- \"kube-credential\""), "\(config)")
        #expect(read(h, "tls/requests.log").contains("/version auth=Bearer \(token)"), "\(read(h, "tls/requests.log"))")
        // Imported twice: refused, the file as it was.
        let again = try h.kc(["kube-credential", "--import", h.directory + "/kube/config", "dev"])
        #expect(again.status != 0 && again.stderr.contains("cannot rewrite"), "\(again.stderr)")
        #expect(read(h, "kube/config") == config)
    }

    /// An embedded client certificate and key move into kc (the backup the user asked for
    /// is 0600), and kubectl presents the certificate from kc.
    @Test func importMovesTheClientKey() throws {
        let h = try home()
        let out = try withServer(
            h,
            user: ["client-certificate-data: $(base64 -w0 tls/client.pem)", "client-key-data: $(base64 -w0 tls/client.key)"],
            """
            grep -q client-key-data kube/config || exit 94
            kc kube-credential --import kube/config dev --backup || exit 95
            ls -A kube
            stat -c %a kube/config.kc-backup
            kubectl get --raw /version
            """)
        #expect(out.status == 0, "\(out.stdout) \(out.stderr)")
        #expect(out.stdout.hasPrefix("config\nconfig.kc-backup\n600\n"), "\(out.stdout)")
        let config = read(h, "kube/config")
        let keyBase64 = Data(read(h, "tls/client.key").utf8).base64EncodedString()
        #expect(!config.contains("client-key-data") && !config.contains(String(keyBase64.prefix(40))) && !config.contains("PRIVATE"), "\(config)")
        #expect(read(h, "tls/requests.log").contains("/version auth=- cn=kc-client"), "\(read(h, "tls/requests.log"))")
        let exec = try h.kc(["kube-credential", "dev"])
        #expect(exec.stdout.contains(#""clientKeyData":"-----BEGIN PRIVATE KEY-----\n"#), "\(exec.stdout)")
    }

    /// What kc cannot rewrite safely is refused with a message, and the file is untouched.
    @Test func importRefusesWhatItCannotRewrite() throws {
        let h = try home()
        let cases = [
            "users:\n- name: dev\n  user:\n    token: t0k\n    username: admin\n",
            "users:\n- name: dev\n  user: {token: t0k}\n",
            "users:\n- name: dev\n  user:\n    token: |\n      t0k\n",
            "users: [{name: dev, user: {token: t0k}}]\n",
            "users:\n- name: dev\n  user:\n    client-key: /some/file\n",
            // Found by attacking: kubectl reads the last `users:` (and kubectl refuses two
            // users of one name); kc moved the first and left the real token.
            "users:\n- name: dev\n  user:\n    token: DECOY\nusers:\n- name: dev\n  user:\n    token: REALSECRET2\n",
            "users:\n- name: dev\n  user:\n    token: DECOY\n- name: dev\n  user:\n    token: REALSECRET2\n"
        ]
        for text in cases {
            let path = h.directory + "/kube-refused"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let out = try h.kc(["kube-credential", "--import", path, "dev"])
            #expect(out.status != 0 && out.stderr.contains("cannot rewrite") && out.stderr.split(separator: "\n").count == 1, "\(text): \(out.stderr)")
            #expect(read(h, "kube-refused") == text)
        }
        let missing = try h.kc(["kube-credential", "--import", h.directory + "/kube-refused", "nobody"])
        #expect(missing.status != 0 && missing.stderr.contains("no user `nobody`"), "\(missing.stderr)")
    }

    /// Found by attacking: with the keychain locked, `--import --backup` wrote the backup (the
    /// secret in it) before it failed, and the next run refused because it existed. The
    /// secret now goes into the keychain first: a locked keychain leaves no file behind.
    @Test func aLockedImportLeavesNoBackup() throws {
        let h = try home()
        let path = h.directory + "/kube-locked"
        let text = "users:\n- name: dev\n  user:\n    token: LOCKEDTOKEN\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try h.kc(["lock"]).status == 0)
        let out = try Spawn.run([KCBinary.path, "kube-credential", "--import", path, "dev", "--backup"], environment: h.environment, timeout: 10)
        #expect(out.status == 36, "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path + ".kc-backup"))
        #expect(read(h, "kube-locked") == text)
    }

    /// Locked, no terminal, no password: one line saying to run `kc unlock`, well under a second.
    @Test func lockedKeychainFailsAtOnce() throws {
        let h = try home()
        #expect(try h.kc(["kube-credential", "dev", "--store"], stdin: Data("tok".utf8)).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
        let start = Date()
        let out = try Spawn.run([KCBinary.path, "kube-credential", "dev"], environment: h.environment, timeout: 5)
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(out.status == 36 && out.stdout.isEmpty)   // errSecInteractionNotAllowed (docs/errors.md)
        #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("kc unlock"), "\(out.stderr)")
    }

    /// Locked, on a terminal: kc asks for the keychain's password, then prints the credential.
    @Test func lockedKeychainAsksOnATerminal() throws {
        let h = try home()
        #expect(try h.kc(["kube-credential", "dev", "--store"], stdin: Data("tok-Typed-41".utf8)).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path
        let spec: [String: Any] = [
            "argv": [KCBinary.path, "kube-credential", "dev"],
            "env": h.environment.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a },
            "steps": [["expect", "assword"], ["send", KCHome.password + "\n"], ["expect", "ExecCredential"]], "answers": [], "timeout": 30
        ]
        let file = h.directory + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"])
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        let screen = session["screen"] as? String ?? ""
        #expect(session["status"] as? Int == 0, "\(screen) \(out.stderr)")
        #expect(screen.contains(#""status":{"token":"tok-Typed-41"}"#), "\(screen)")
        #expect(!screen.contains(KCHome.password), "the password is not echoed: \(screen)")
    }

    /// `kc -k work kube-credential --import …` stores in `work` and writes a stanza that
    /// names it, so kubectl's call finds the token there and not in the default keychain.
    @Test func importIntoAnotherKeychain() throws {
        let h = try home()
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        let out = try withServer(
            h,
            user: ["token: w0rk-Token-52"],
            """
            kc -k work kube-credential --import kube/config dev || exit 94
            kubectl get --raw /version
            """)
        #expect(out.status == 0, "\(out.stdout) \(out.stderr)")
        #expect(read(h, "kube/config").contains("- \"--keychain\"\n      - \"work\""), "\(read(h, "kube/config"))")
        #expect(read(h, "tls/requests.log").contains("/version auth=Bearer w0rk-Token-52"), "\(read(h, "tls/requests.log"))")
        #expect(try h.kc(["find", "-s", "kube:dev"]).status != 0, "not in the default keychain")
        #expect(try h.kc(["find", "-k", "work", "-s", "kube:dev", "-w"]).stdout == "w0rk-Token-52")
    }

    /// Found by attacking the import: root (sudo keeping HOME) importing from a user's
    /// kubeconfig left the rewritten file root's. It keeps its owner, group and mode now.
    @Test func importKeepsTheFilesOwner() throws {
        let h = try home()
        let path = h.directory + "/kube-owned"
        try Data("users:\n- name: dev\n  user:\n    token: OWNEDTOKEN\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o640) == 0 && chown(path, OtherUser.uid, OtherUser.uid) == 0)
        let out = try h.kc(["kube-credential", "--import", path, "dev"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(!read(h, "kube-owned").contains("OWNEDTOKEN") && read(h, "kube-owned").contains("kube-credential"), "\(read(h, "kube-owned"))")
        var st = stat()
        #expect(
            stat(path, &st) == 0 && st.st_uid == OtherUser.uid && st.st_gid == OtherUser.uid && st.st_mode & 0o7777 == 0o640,
            "\(st.st_uid):\(st.st_gid) \(st.st_mode)")
    }

    /// `kc kube-credential` was missing from `kc --help` and the man page (KC.main runs it
    /// before ArgumentParser): both list it beside aws-credentials now, and `kc help
    /// kube-credential` and `kc kube-credential --help` give its options and discussion.
    @Test func helpAndTheManPageListIt() throws {
        let h = try KCHome()
        var out = try h.kc(["--help"])
        #expect(out.status == 0 && out.stdout.contains("\n  aws-credentials ") && out.stdout.contains("\n  kube-credential "), "\(out.stdout)")
        out = try h.kc(["help", "kube-credential"])
        #expect(out.status == 0 && out.stdout.contains("USAGE: kc kube-credential") && out.stdout.contains("--expires <time>"), "\(out.stdout) \(out.stderr)")
        let help = try h.kc(["kube-credential", "--help"])
        #expect(help.status == 0 && help.stdout == out.stdout, "\(help.stdout) \(help.stderr)")
        let manual = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/man/kc.1").standardized.path
        let page = (try? String(contentsOfFile: manual, encoding: .utf8)) ?? ""
        #expect(page.contains(".Ss kc kube-credential") && page.contains(".Ss kc aws-credentials"), "\(manual)")
    }
}
