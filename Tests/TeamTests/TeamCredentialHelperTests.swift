import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The four credential helpers of issue 33 on a team keychain (`-k team:NAME`, `KC_KEYCHAIN`,
/// the configuration file's `keychain`): one member stores the AWS profile, the Vault token,
/// the Terraform host token or the kube credential through the helper, and a second member
/// or a CI runner with a reader token gets it through the helper, called as its client calls
/// it. "A CI fleet shares one AWS profile through a team keychain." The real `kc`, `kc-team`
/// and team agent, the real PostgreSQL, Debian's awscli.
@Suite struct TeamCredentialHelperTests {
    static let keyID = "AKIAKCTEAMFLEET00001"
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYKCTEAMSECRET"

    /// The admin's home with team:infra created on a fresh database and unlocked.
    static func admin() throws -> KCHome {
        try TeamCommandTests.admin(try TestPostgres.shared.newDatabase()).0
    }

    /// A second device: joins with the join string, is added as a writer, unlocks.
    static func member(_ admin: KCHome, join: String) throws -> KCHome {
        let bob = try KCHome()
        let joined = try TeamCommandTests.run(bob, ["team", "join", join, "--member", "bob-laptop", "--kdf", "interactive"])
        let fingerprint = joined.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try TeamCommandTests.run(admin, ["team", "add", "bob-laptop", "--key", fingerprint, "-k", "team:infra", "--role", "writer"])
        try TeamCommandTests.run(bob, ["unlock", "-k", "team:infra"])
        return bob
    }

    /// A CI runner: a fresh home with only a reader token, unlocked with it (no password, no team file).
    static func runner(_ admin: KCHome) throws -> KCHome {
        let token = try TeamCommandTests.run(admin, ["team", "add-runner", "ci-prod", "-k", "team:infra", "--role", "reader", "--expires", "90d"]).stdout
        let runner = try KCHome()
        let file = runner.directory + "/kc-token"
        try token.write(toFile: file, atomically: true, encoding: .utf8)
        try TeamCommandTests.run(runner, ["unlock", "--team-token-file", file], password: nil)
        return runner
    }

    /// `kc` as `make install` puts it on the PATH, in a folder of the home, with the
    /// helpers' links beside it.
    static func installed(_ h: KCHome) throws -> String {
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in ["kc", "kc-vault-token-helper"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: KCBinary.path)
        }
        return bin
    }

    /// Runs `argv` with the home's environment (no KC_PASSWORD) and `extra`.
    static func spawn(
        _ h: KCHome, _ argv: [String], _ extra: [String: String] = [:], stdin: String? = nil, timeout: Double = 50
    ) throws -> KCBinary.Output {
        var env = h.environment.merging(extra) { _, b in b }
        env["PATH"] = env["PATH"] ?? "/usr/bin:/bin"
        return try Spawn.run(argv, environment: env, stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
    }

    static func json(_ out: KCBinary.Output) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(out.stdout.utf8))) as? [String: Any] ?? [:]
    }

    static let readOnly = Int32(UInt8(truncatingIfNeeded: errSecReadOnly))

    /// The admin stores a profile's keys in the team keychain with `--store -k team:infra`
    /// (the config line carries the `-k`); a CI runner with a reader token, whose
    /// `~/.aws/config` names the plain `kc aws-credentials ci` and whose job sets
    /// `KC_KEYCHAIN=team:infra`, gets them through awscli; `-k` works there too; the reader
    /// cannot overwrite them.
    @Test func aCIFleetSharesOneAWSProfileThroughATeamKeychain() throws {
        let admin = try Self.admin()
        let json = #"{"Version": 1, "AccessKeyId": "\#(Self.keyID)", "SecretAccessKey": "\#(Self.secret)", "SessionToken": "fleet/tok+="}"#
        var out = try Self.spawn(admin, [KCBinary.path, "aws-credentials", "-k", "team:infra", "--store", "ci"], stdin: json)
        #expect(out.status == 0 && out.stdout.isEmpty && !out.stderr.contains(Self.secret), "\(out.stdout) \(out.stderr)")
        let config = (try? String(contentsOfFile: admin.directory + "/.aws/config", encoding: .utf8)) ?? ""
        #expect(config == "[profile ci]\ncredential_process = kc aws-credentials -k team:infra ci\n", "\(config)")
        // An ordinary item of the team keychain.
        out = try TeamCommandTests.run(admin, ["find", "-k", "team:infra", "-s", "aws:ci"])
        #expect(out.stdout.contains(Self.keyID) && !out.stdout.contains(Self.secret), "\(out.stdout)")

        let runner = try Self.runner(admin)
        let bin = try Self.installed(runner)
        let aws = runner.directory + "/.aws"
        try FileManager.default.createDirectory(atPath: aws, withIntermediateDirectories: true)
        try "[profile ci]\ncredential_process = kc aws-credentials ci\n".write(toFile: aws + "/config", atomically: true, encoding: .utf8)
        let job = ["PATH": bin + ":/usr/bin:/bin", "KC_KEYCHAIN": "team:infra", "AWS_EC2_METADATA_DISABLED": "true"]
        out = try Self.spawn(runner, ["/usr/bin/aws", "configure", "export-credentials", "--profile", "ci", "--format", "process"], job)
        #expect(out.status == 0, "\(out.stderr)")
        let exported = Self.json(out)
        #expect(exported["AccessKeyId"] as? String == Self.keyID && exported["SecretAccessKey"] as? String == Self.secret, "\(out.stdout) \(out.stderr)")
        #expect(exported["SessionToken"] as? String == "fleet/tok+=", "\(out.stdout)")
        // What awscli ran, with -k instead of the variable.
        out = try Self.spawn(runner, [KCBinary.path, "aws-credentials", "-k", "team:infra", "ci"])
        #expect(
            out.stdout == #"{"Version":1,"AccessKeyId":"\#(Self.keyID)","SecretAccessKey":"\#(Self.secret)","SessionToken":"fleet/tok+="}"# + "\n",
            "\(out.stderr)")
        // A reader cannot replace the fleet's keys.
        out = try Self.spawn(runner, [KCBinary.path, "aws-credentials", "-k", "team:infra", "--store", "ci"], stdin: json.replacing(Self.secret, with: "other"))
        #expect(out.status == Self.readOnly && out.stderr.split(separator: "\n").count == 1, "\(out.status) \(out.stderr)")
        out = try TeamCommandTests.run(admin, ["find", "-k", "team:infra", "-s", "aws:ci", "-w"])
        #expect(out.stdout.contains(Self.secret), "\(out.stdout)")
    }

    /// Vault passes the helper no KC_KEYCHAIN: the admin points `token_helper` at the
    /// two-line script of docs/integrations.md ("Vault and OpenBao") and stores the token;
    /// a second member whose `~/.config/kc/config` says `keychain = team:infra` gets it
    /// through the helper itself, byte for byte, and `erase` removes it for both.
    @Test func aVaultTokenInATeamKeychainReachesASecondMember() throws {
        let (admin, join) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let adminBin = try Self.installed(admin)
        let wrapper = admin.directory + "/kc-vault-team"
        try "#!/bin/sh\nKC_KEYCHAIN=team:infra exec \(adminBin)/kc-vault-token-helper \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        #expect(chmod(wrapper, 0o755) == 0)
        let vault = ["VAULT_ADDR": "https://vault.example.com:8200", "SHELL": "/bin/sh"]
        let token = "hvs.CAESIteamTOKENshared0123456789"
        var out = try Self.spawn(admin, ["/bin/sh", "-c", wrapper + " store"], vault, stdin: token)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        // Not in the admin's own keychain: in the team's.
        out = try TeamCommandTests.run(admin, ["find", "-k", "team:infra", "-s", "vault:https://vault.example.com:8200", "-a", "token", "-w"])
        #expect(out.stdout == token, "\(out.stdout)")

        let bob = try Self.member(admin, join: join)
        let helper = try Self.installed(bob) + "/kc-vault-token-helper"
        try FileManager.default.createDirectory(atPath: bob.directory + "/.config/kc", withIntermediateDirectories: true)
        try "keychain = team:infra\n".write(toFile: bob.directory + "/.config/kc/config", atomically: true, encoding: .utf8)
        out = try Self.spawn(bob, ["/bin/sh", "-c", helper + " get"], vault.merging(["VAULT_ADDR": "https://Vault.example.com:8200/"]) { _, b in b })
        #expect(out.status == 0 && out.stdoutBytes == Array(token.utf8) && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try Self.spawn(bob, ["/bin/sh", "-c", helper + " erase"], vault)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        out = try Self.spawn(admin, ["/bin/sh", "-c", wrapper + " get"], vault)
        #expect(out.status == 0 && out.stdoutBytes.isEmpty, "erased for the team: \(out.stdout) \(out.stderr)")
    }

    /// The admin stores a host token through `terraform-credentials-kc -k team:infra store`
    /// (the block's `args`); a CI runner gets it through its own installed link, with the
    /// same args or with `KC_KEYCHAIN`, and cannot store (a reader: exit 52, one line).
    @Test func aTerraformHostTokenInATeamKeychainReachesARunner() throws {
        let admin = try Self.admin()
        func install(_ h: KCHome) throws -> String {
            let out = try Self.spawn(h, [KCBinary.path, "terraform-credentials", "--install"])
            #expect(out.status == 0, "\(out.stderr)")
            return h.directory + "/.terraform.d/plugins/terraform-credentials-kc"
        }
        var out = try Self.spawn(admin, [try install(admin), "-k", "team:infra", "store", "tfe.example.com"], stdin: #"{"token":"team.atlasv1.shared"}"#)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")

        let runner = try Self.runner(admin)
        let link = try install(runner)
        out = try Self.spawn(runner, [link, "-k", "team:infra", "get", "tfe.example.com"])
        #expect(out.status == 0 && out.stdout == #"{"token":"team.atlasv1.shared"}"# + "\n" && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try Self.spawn(runner, [link, "get", "tfe.example.com"], ["KC_KEYCHAIN": "team:infra"])
        #expect(Self.json(out)["token"] as? String == "team.atlasv1.shared", "\(out.stdout) \(out.stderr)")
        out = try Self.spawn(runner, [link, "get", "other.example.com"], ["KC_KEYCHAIN": "team:infra"])
        #expect(out.status == 0 && out.stdout == "{}\n", "\(out.stdout) \(out.stderr)")
        out = try Self.spawn(runner, [link, "-k", "team:infra", "store", "tfe.example.com"], stdin: #"{"token":"runner.overwrite"}"#)
        #expect(out.status == Self.readOnly && out.stdout.isEmpty && out.stderr.split(separator: "\n").count == 1, "\(out.status) \(out.stderr)")
        out = try Self.spawn(admin, [link, "-k", "team:infra", "get", "tfe.example.com"])
        #expect(Self.json(out)["token"] as? String == "team.atlasv1.shared", "\(out.stdout)")
    }

    /// The admin stores a kube token with an expiry in the team keychain; a second member
    /// (v1beta1, kubectl 1.20's) and a runner (v1, through KC_KEYCHAIN) each get an
    /// ExecCredential echoing the apiVersion kubectl sent in KUBERNETES_EXEC_INFO; the
    /// runner's kubectl sends the token to a local HTTPS server.
    @Test func aKubeCredentialInATeamKeychainReachesAMemberAndARunner() throws {
        let (admin, join) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let token = "eyJhbGciOiJSUzI1NiJ9.team-kube-token"
        var out = try Self.spawn(
            admin, [KCBinary.path, "kube-credential", "-k", "team:infra", "prod", "--store", "--expires", "2030-01-31T12:00:00Z"], stdin: token + "\n")
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let bob = try Self.member(admin, join: join)
        let runner = try Self.runner(admin)
        for (home, version, extra, args) in [
            (bob, "client.authentication.k8s.io/v1beta1", [String: String](), ["-k", "team:infra", "prod"]),
            (runner, "client.authentication.k8s.io/v1", ["KC_KEYCHAIN": "team:infra"], ["prod"])
        ] {
            let info = #"{"kind":"ExecCredential","apiVersion":"\#(version)","spec":{"interactive":false}}"#
            out = try Self.spawn(home, [KCBinary.path, "kube-credential"] + args, extra.merging(["KUBERNETES_EXEC_INFO": info]) { a, _ in a })
            #expect(out.status == 0 && out.stderr.isEmpty, "\(version): \(out.stderr)")
            let credential = Self.json(out)
            let status = credential["status"] as? [String: Any] ?? [:]
            #expect(credential["apiVersion"] as? String == version && credential["kind"] as? String == "ExecCredential", "\(out.stdout)")
            #expect(status["token"] as? String == token && status["expirationTimestamp"] as? String == "2030-01-31T12:00:00Z", "\(out.stdout)")
        }
        // The runner's kubectl itself, the team keychain named in the exec stanza's `env`,
        // against the HTTPS stand-in of KubectlCredentialTests, which records the header.
        let bin = try Self.installed(runner)
        out = try Self.spawn(
            runner, ["/bin/sh", "-c", "cd '\(runner.directory)' || exit 99\n" + Self.kubectlScript(server: Self.kubeServer, user: "prod")],
            ["PATH": bin + ":/usr/bin:/bin", "KUBECONFIG": runner.directory + "/kube/config"], timeout: 90)
        #expect(out.status == 0 && out.stdout.contains("v1.20.2"), "\(out.stdout) \(out.stderr)")
        let requests = (try? String(contentsOfFile: runner.directory + "/tls/requests.log", encoding: .utf8)) ?? ""
        #expect(requests.contains("/version auth=Bearer \(token)"), "\(requests)")
    }

    /// The HTTPS stand-in for a Kubernetes API server of KubectlCredentialTests.
    static let kubeServer = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("kcTests/kube_https_server.py").path

    /// Makes throwaway certificates, starts `server` (killed on exit, and by itself after
    /// 60 s), writes a kubeconfig whose user runs `kc kube-credential NAME` with
    /// `KC_KEYCHAIN=team:infra` in the stanza's `env`, and runs `kubectl get --raw /version`.
    static func kubectlScript(server: String, user name: String) -> String {
        """
        mkdir -m 700 kube tls && cd tls || exit 1
        openssl req -x509 -newkey rsa:2048 -nodes -keyout server.key -out server.pem -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null || exit 2
        openssl req -x509 -newkey rsa:2048 -nodes -keyout client.key -out client.pem -days 1 -subj /CN=kc-client -addext extendedKeyUsage=clientAuth 2>/dev/null || exit 3
        cd .. || exit 4
        timeout 60 python3 '\(server)' tls & SPID=$!
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
            user: ci
          name: x
        current-context: x
        kind: Config
        preferences: {}
        users:
        - name: ci
          user:
            exec:
              apiVersion: client.authentication.k8s.io/v1beta1
              args:
              - kube-credential
              - \(name)
              command: kc
              env:
              - name: KC_KEYCHAIN
                value: team:infra
              provideClusterInfo: false
        EOF
        chmod 600 kube/config || exit 93
        kubectl get --raw /version
        """
    }

    /// A member's team keychain locked (`kc lock -k team:infra`) and no terminal (setsid):
    /// each of the four helpers fails at once, exit 36, with one line on stderr that says
    /// to run `kc unlock -k team:infra`, and nothing on stdout.
    @Test func aLockedTeamKeychainFailsEachHelperAtOnceWithoutATerminal() throws {
        let (admin, join) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let bob = try Self.member(admin, join: join)
        let bin = try Self.installed(bob)
        let terraform = try Self.spawn(bob, [KCBinary.path, "terraform-credentials", "--install"])
        #expect(terraform.status == 0, "\(terraform.stderr)")
        try TeamCommandTests.run(bob, ["lock", "-k", "team:infra"], password: nil)
        let env = [
            "KC_KEYCHAIN": "team:infra", "VAULT_ADDR": "https://vault.example.com", "SHELL": "/bin/sh",
            "KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#
        ]
        let calls: [(String, [String])] = [
            ("aws", [bin + "/kc", "aws-credentials", "ci"]),
            ("vault", ["/bin/sh", "-c", bin + "/kc-vault-token-helper get"]),
            ("terraform", [bob.directory + "/.terraform.d/plugins/terraform-credentials-kc", "get", "tfe.example.com"]),
            ("kube", [bin + "/kc", "kube-credential", "prod"])
        ]
        for (name, argv) in calls {
            let started = Date()
            let out = try Self.spawn(bob, ["/usr/bin/setsid", "-w"] + argv, env, timeout: 5)
            let elapsed = Date().timeIntervalSince(started)
            #expect(out.status == 36, "\(name): \(out.status) \(out.stderr)")
            #expect(elapsed < 1.0, "\(name) took \(elapsed) s")
            #expect(out.stdoutBytes.isEmpty, "\(name): \(out.stdout)")
            #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("kc unlock -k team:infra"), "\(name): \(out.stderr)")
        }
    }
}
